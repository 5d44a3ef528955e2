#include "tools/file_tool_args.h"

#include <cmath>
#include <set>

#include <nlohmann/json.hpp>

#include "base/json_input.h"
#include "tools/tool_catalog.h"

namespace odin {
namespace {

using nlohmann::json;

// Reads the fields of one JSON object, remembering the first problem.
class ArgReader {
 public:
  // A call's arguments, parsed once (at Submit, or by ArgsText).
  ArgReader(std::string_view tool, const json& args) : tool_(tool), root_(args) {
    if (root_.is_discarded()) {
      Fail("arguments are not valid JSON");
    } else if (!root_.is_object()) {
      Fail("arguments must be a JSON object");
    }
  }
  // One object nested in them ("edits[0].").
  ArgReader(std::string_view tool, const json& object, const std::string& where)
      : tool_(tool), root_(object), where_(where) {
    if (!root_.is_object()) Fail(where_ + " must be an object");
  }

  bool String(const char* key, std::string* out, bool required, bool non_empty = false) {
    const json* v = Get(key, required);
    if (v == nullptr) return false;
    if (!v->is_string()) return Fail(Name(key) + " must be a string");
    *out = v->get<std::string>();
    if (non_empty && out->empty()) return Fail(Name(key) + " must not be empty");
    return true;
  }
  bool Bool(const char* key, bool* out) {
    const json* v = Get(key, false);
    if (v == nullptr) return false;
    if (!v->is_boolean()) return Fail(Name(key) + " must be true or false");
    *out = v->get<bool>();
    return true;
  }
  // A non-negative integer (JSON numbers like 3.0 count; 3.5 does not).
  bool Uint(const char* key, uint32_t* out, uint32_t min = 0) {
    const json* v = Get(key, false);
    if (v == nullptr) return false;
    double d = v->is_number() ? v->get<double>() : -1;
    if (!v->is_number() || d < min || d > 1e9 || std::floor(d) != d) {
      return Fail(Name(key) + " must be an integer of at least " + std::to_string(min));
    }
    *out = static_cast<uint32_t>(d);
    return true;
  }
  const json* Array(const char* key, bool required) {
    const json* v = Get(key, required);
    if (v == nullptr) return nullptr;
    if (!v->is_array()) {
      Fail(Name(key) + " must be an array");
      return nullptr;
    }
    return v;
  }
  // Unknown fields are errors (additionalProperties: false).
  Status Finish() {
    if (status_.ok() && root_.is_object()) {
      for (auto it = root_.begin(); it != root_.end(); ++it) {
        if (seen_.count(it.key()) == 0) Fail("unknown field " + Name(it.key().c_str()));
      }
    }
    return status_;
  }
  bool ok() const { return status_.ok(); }
  bool Fail(const std::string& what) {
    if (status_.ok()) status_ = Status::InvalidArgument(std::string(tool_), what);
    return false;
  }
  const std::string& tool() const { return tool_; }

 private:
  std::string Name(const char* key) const { return where_ + "'" + key + "'"; }
  const json* Get(const char* key, bool required) {
    seen_.insert(key);
    if (!status_.ok() || !root_.is_object()) return nullptr;
    auto it = root_.find(key);
    if (it == root_.end()) {
      if (required) Fail("missing required field " + Name(key));
      return nullptr;
    }
    return &*it;
  }

  std::string tool_;
  const json& root_;
  std::string where_;
  std::set<std::string> seen_;
  Status status_;
};

}  // namespace

StatusOr<ReadArgs> ReadArgsOf(const json& args) {
  ArgReader r(kReadTool, args);
  ReadArgs a;
  r.String("file_path", &a.file_path, true, true);
  r.Uint("offset", &a.offset, 1);
  r.Uint("limit", &a.limit, 1);
  RETURN_IF_ERROR(r.Finish());
  return a;
}

StatusOr<WriteArgs> WriteArgsOf(const json& args) {
  ArgReader r(kWriteFileTool, args);
  WriteArgs a;
  r.String("file_path", &a.file_path, true, true);
  r.String("content", &a.content, true);
  RETURN_IF_ERROR(r.Finish());
  return a;
}

StatusOr<EditSymbolArgs> EditSymbolArgsOf(const json& args, bool resolved) {
  ArgReader r(kEditSymbolTool, args);
  EditSymbolArgs a;
  std::string operation;
  r.String("symbol_id", &a.symbol_id, true, true);
  r.String("span_sha256", &a.span_sha256, true, true);
  r.String("operation", &operation, true, true);
  r.String("content", &a.content, false);
  if (resolved) {
    r.String("file_path", &a.file_path, true, true);
    r.Uint("start_byte", &a.start_byte);
    r.Uint("end_byte", &a.end_byte);
  }
  RETURN_IF_ERROR(r.Finish());
  if (operation == "replace") {
    a.operation = SpanOperation::kReplace;
  } else if (operation == "insert_before") {
    a.operation = SpanOperation::kInsertBefore;
  } else if (operation == "insert_after") {
    a.operation = SpanOperation::kInsertAfter;
  } else if (operation == "delete") {
    a.operation = SpanOperation::kDelete;
  } else {
    return Status::InvalidArgument(kEditSymbolTool,
                                   "\"operation\" must be replace, insert_before, insert_after or delete");
  }
  if (a.operation != SpanOperation::kDelete && a.content.empty()) {
    return Status::InvalidArgument(kEditSymbolTool, "\"content\" is required (empty only for delete)");
  }
  if (a.operation == SpanOperation::kDelete && !a.content.empty()) {
    return Status::InvalidArgument(kEditSymbolTool, "\"content\" must be empty for delete");
  }
  if (a.span_sha256.size() != 64) return Status::InvalidArgument(kEditSymbolTool, "\"span_sha256\" is not a SHA-256");
  if (resolved && a.end_byte < a.start_byte) return Status::InvalidArgument(kEditSymbolTool, "the span is reversed");
  return a;
}

StatusOr<WriteArgs> InitToolArgsOf(const json& args) {
  ArgReader r(kInitTool, args);
  WriteArgs a;
  r.String("content", &a.content, true);
  RETURN_IF_ERROR(r.Finish());
  if (a.content.empty()) return Status::InvalidArgument(kInitTool, "\"content\" is empty");
  a.file_path = "ODIN.md";
  return a;
}

namespace {

void ReadEdit(ArgReader& r, EditSpec* e) {
  r.String("old_string", &e->old_string, true);
  r.String("new_string", &e->new_string, true);
  r.Bool("replace_all", &e->replace_all);
}

}  // namespace

StatusOr<EditArgs> EditArgsOf(std::string_view tool, const json& args) {
  ArgReader r(tool, args);
  EditArgs a;
  r.String("file_path", &a.file_path, true, true);
  if (tool == kEditTool) {
    EditSpec e;
    ReadEdit(r, &e);
    a.edits.push_back(std::move(e));
  } else {
    const json* edits = r.Array("edits", true);
    if (edits != nullptr && edits->empty()) r.Fail("'edits' must hold at least one edit");
    if (edits != nullptr) {
      for (size_t i = 0; i < edits->size() && r.ok(); ++i) {
        ArgReader er(tool, (*edits)[i], "edits[" + std::to_string(i) + "].");
        EditSpec e;
        ReadEdit(er, &e);
        Status s = er.Finish();
        if (!s.ok()) return s;
        a.edits.push_back(std::move(e));
      }
    }
  }
  RETURN_IF_ERROR(r.Finish());
  return a;
}

StatusOr<GrepArgs> GrepArgsOf(const json& args) {
  ArgReader r(kGrepTool, args);
  GrepArgs a;
  r.String("pattern", &a.pattern, true, true);
  r.String("path", &a.path, false);
  r.String("glob", &a.glob, false);
  r.String("type", &a.type, false);
  if (r.String("output_mode", &a.output_mode, false) && a.output_mode != "content" &&
      a.output_mode != "files_with_matches" && a.output_mode != "count") {
    r.Fail("'output_mode' must be content, files_with_matches or count");
  }
  r.Bool("-n", &a.line_numbers);
  r.Bool("-i", &a.ignore_case);
  uint32_t n;
  if (r.Uint("-A", &n)) a.after = static_cast<int>(n);
  if (r.Uint("-B", &n)) a.before = static_cast<int>(n);
  if (r.Uint("-C", &n)) a.context = static_cast<int>(n);
  r.Uint("head_limit", &a.head_limit, 1);
  r.Bool("multiline", &a.multiline);
  r.Uint("offset", &a.offset, 1);
  r.Uint("limit", &a.limit, 1);
  RETURN_IF_ERROR(r.Finish());
  bool context = a.after >= 0 || a.before >= 0 || a.context >= 0 || a.line_numbers;
  if (context && a.output_mode != "content") {
    return Status::InvalidArgument(kGrepTool, "-n, -A, -B and -C require output_mode \"content\"");
  }
  if ((a.offset != 0 || a.limit != 0) && a.output_mode != "content") {
    return Status::InvalidArgument(kGrepTool, "offset and limit require output_mode \"content\"");
  }
  return a;
}

StatusOr<GlobArgs> GlobArgsOf(const json& args) {
  ArgReader r(kGlobTool, args);
  GlobArgs a;
  r.String("pattern", &a.pattern, true, true);
  r.String("path", &a.path, false);
  RETURN_IF_ERROR(r.Finish());
  return a;
}

StatusOr<LsArgs> LsArgsOf(const json& args) {
  ArgReader r(kLsTool, args);
  LsArgs a;
  r.String("path", &a.path, true, true);
  if (const json* ignore = r.Array("ignore", false)) {
    for (const json& g : *ignore) {
      if (!g.is_string()) return Status::InvalidArgument(kLsTool, "'ignore' must be an array of strings");
      a.ignore.push_back(g.get<std::string>());
    }
  }
  RETURN_IF_ERROR(r.Finish());
  return a;
}

StatusOr<TodoArgs> TodoArgsOf(const json& args) {
  ArgReader r(kTodoWriteTool, args);
  TodoArgs a;
  const json* todos = r.Array("todos", true);
  if (todos != nullptr) {
    std::set<std::string> ids;
    for (size_t i = 0; i < todos->size(); ++i) {
      ArgReader tr(kTodoWriteTool, (*todos)[i], "todos[" + std::to_string(i) + "].");
      TodoItem t;
      tr.String("id", &t.id, true, true);
      tr.String("content", &t.content, true, true);
      if (tr.String("status", &t.status, true) && t.status != "pending" && t.status != "in_progress" &&
          t.status != "completed") {
        tr.Fail("todos[" + std::to_string(i) + "].'status' must be pending, in_progress or completed");
      }
      RETURN_IF_ERROR(tr.Finish());
      if (!ids.insert(t.id).second) {
        return Status::InvalidArgument(kTodoWriteTool, "duplicate todo id '" + t.id + "'");
      }
      a.todos.push_back(std::move(t));
    }
  }
  RETURN_IF_ERROR(r.Finish());
  return a;
}

json ArgsText(std::string_view text) { return ParseJson(text); }

StatusOr<ReadArgs> ParseReadArgs(std::string_view text) { return ReadArgsOf(ArgsText(text)); }
StatusOr<EditSymbolArgs> ParseEditSymbolArgs(std::string_view text, bool resolved) {
  return EditSymbolArgsOf(ArgsText(text), resolved);
}
StatusOr<EditArgs> ParseEditArgs(std::string_view tool, std::string_view text) {
  return EditArgsOf(tool, ArgsText(text));
}
StatusOr<GrepArgs> ParseGrepArgs(std::string_view text) { return GrepArgsOf(ArgsText(text)); }
StatusOr<TodoArgs> ParseTodoArgs(std::string_view text) { return TodoArgsOf(ArgsText(text)); }

std::string TargetFileOf(std::string_view tool, std::string_view text) {
  json args = ArgsText(text);
  if (tool == kInitTool) return InitToolArgsOf(args).ok() ? "ODIN.md" : "";
  if (tool == kWriteFileTool) {
    auto a = WriteArgsOf(args);
    return a.ok() ? a->file_path : "";
  }
  if (tool == kEditTool || tool == kMultiEditTool) {
    auto a = EditArgsOf(tool, args);
    return a.ok() ? a->file_path : "";
  }
  return "";
}

}  // namespace odin
