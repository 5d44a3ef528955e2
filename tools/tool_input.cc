#include "tools/tool_input.h"

#include <nlohmann/json.hpp>

#include "odin/v1/worker.pb.h"

namespace odin {
namespace {

void SetInput(const ReadArgs& a, v1::ToolInput* in) {
  v1::ReadInput* r = in->mutable_read();
  r->set_file_path(a.file_path);
  r->set_offset(a.offset);
  r->set_limit(a.limit);
}

void SetInput(const EditArgs& a, v1::ToolInput* in) {
  v1::EditInput* e = in->mutable_edit();
  e->set_file_path(a.file_path);
  for (const EditSpec& spec : a.edits) {
    v1::EditInput::Edit* x = e->add_edits();
    x->set_old_string(spec.old_string);
    x->set_new_string(spec.new_string);
    x->set_replace_all(spec.replace_all);
  }
}

void SetInput(const GrepArgs& a, v1::ToolInput* in) {
  v1::GrepInput* g = in->mutable_grep();
  g->set_pattern(a.pattern);
  g->set_path(a.path);
  g->set_glob(a.glob);
  g->set_type(a.type);
  g->set_output_mode(a.output_mode);
  g->set_line_numbers(a.line_numbers);
  g->set_ignore_case(a.ignore_case);
  g->set_after(a.after);
  g->set_before(a.before);
  g->set_context(a.context);
  g->set_head_limit(a.head_limit);
  g->set_multiline(a.multiline);
  g->set_offset(a.offset);
  g->set_limit(a.limit);
}

void SetInput(const GlobArgs& a, v1::ToolInput* in) {
  in->mutable_glob()->set_pattern(a.pattern);
  in->mutable_glob()->set_path(a.path);
}

void SetInput(const LsArgs& a, v1::ToolInput* in) {
  in->mutable_ls()->set_path(a.path);
  for (const std::string& g : a.ignore) in->mutable_ls()->add_ignore(g);
}

void SetInput(const CommandArgs& a, v1::ToolInput* in) {
  v1::CommandInput* c = in->mutable_command();
  c->set_script(a.script);
  for (const std::string& w : a.argv) c->add_argv(w);
  c->set_cwd(a.cwd);
}

void SetInput(const WebFetchArgs& a, v1::ToolInput* in) {
  in->mutable_web_fetch()->set_url(a.url);
  in->mutable_web_fetch()->set_prompt(a.prompt);
}

// The tool's own parser, then its typed form.
template <typename Args>
StatusOr<v1::ToolInput> Typed(StatusOr<Args> parsed) {
  if (!parsed.ok()) return parsed.status();
  v1::ToolInput in;
  SetInput(*parsed, &in);
  return in;
}

}  // namespace

StatusOr<v1::ToolInput> ParseToolInput(const std::string& tool, const nlohmann::json& args) {
  switch (HandlerOf(tool)) {
    case ToolHandler::kFileRead: return Typed(ReadArgsOf(args));
    case ToolHandler::kSearch:
      if (tool == kGrepTool) return Typed(GrepArgsOf(args));
      if (tool == kGlobTool) return Typed(GlobArgsOf(args));
      return Typed(LsArgsOf(args));
    case ToolHandler::kFileWrite:
      if (WriteFormOf(tool) == WriteForm::kWhole) return Typed(WriteArgsOf(args));
      return Typed(EditArgsOf(tool, args));
    case ToolHandler::kInit: return Typed(InitToolArgsOf(args));
    case ToolHandler::kEditSymbol: return Typed(EditSymbolArgsOf(args, false));
    case ToolHandler::kCommand: return Typed(CommandArgsOf(args));
    case ToolHandler::kWebFetch: return Typed(WebFetchArgsOf(args));
    default: return v1::ToolInput();
  }
}

void SetInput(const WriteArgs& a, v1::ToolInput* in) {
  in->mutable_write()->set_file_path(a.file_path);
  in->mutable_write()->set_content(a.content);
}

void SetInput(const EditSymbolArgs& a, v1::ToolInput* in) {
  v1::EditSymbolInput* e = in->mutable_edit_symbol();
  e->set_symbol_id(a.symbol_id);
  e->set_span_sha256(a.span_sha256);
  e->set_operation(static_cast<v1::EditSymbolInput::Operation>(a.operation));
  e->set_content(a.content);
  e->set_file_path(a.file_path);
  e->set_start_byte(a.start_byte);
  e->set_end_byte(a.end_byte);
}

Status MissingInput(const std::string& tool) {
  return Status::InvalidArgument(tool, "the request carries no typed input for this tool");
}

ReadArgs ArgsOf(const v1::ReadInput& in) { return {in.file_path(), in.offset(), in.limit()}; }

WriteArgs ArgsOf(const v1::WriteInput& in) { return {in.file_path(), in.content()}; }

EditArgs ArgsOf(const v1::EditInput& in) {
  EditArgs a;
  a.file_path = in.file_path();
  for (const v1::EditInput::Edit& e : in.edits()) a.edits.push_back({e.old_string(), e.new_string(), e.replace_all()});
  return a;
}

EditSymbolArgs ArgsOf(const v1::EditSymbolInput& in) {
  EditSymbolArgs a;
  a.symbol_id = in.symbol_id();
  a.span_sha256 = in.span_sha256();
  a.operation = static_cast<SpanOperation>(in.operation());
  a.content = in.content();
  a.file_path = in.file_path();
  a.start_byte = in.start_byte();
  a.end_byte = in.end_byte();
  return a;
}

GrepArgs ArgsOf(const v1::GrepInput& in) {
  GrepArgs a;
  a.pattern = in.pattern();
  a.path = in.path();
  a.glob = in.glob();
  a.type = in.type();
  a.output_mode = in.output_mode();
  a.line_numbers = in.line_numbers();
  a.ignore_case = in.ignore_case();
  a.after = in.after();
  a.before = in.before();
  a.context = in.context();
  a.head_limit = in.head_limit();
  a.multiline = in.multiline();
  a.offset = in.offset();
  a.limit = in.limit();
  return a;
}

GlobArgs ArgsOf(const v1::GlobInput& in) { return {in.pattern(), in.path()}; }

LsArgs ArgsOf(const v1::LsInput& in) { return {in.path(), {in.ignore().begin(), in.ignore().end()}}; }

CommandArgs ArgsOf(const v1::CommandInput& in) { return {in.script(), {in.argv().begin(), in.argv().end()}, in.cwd()}; }

WebFetchArgs ArgsOf(const v1::WebFetchInput& in) { return {in.url(), in.prompt()}; }

std::string ReadPathOf(const v1::ToolInput& in) {
  switch (in.kind_case()) {
    case v1::ToolInput::kRead: return in.read().file_path();
    case v1::ToolInput::kGrep: return in.grep().path();
    case v1::ToolInput::kGlob: return in.glob().path();
    case v1::ToolInput::kLs: return in.ls().path();
    default: return "";
  }
}

std::string WritePathOf(const v1::ToolInput& in) {
  switch (in.kind_case()) {
    case v1::ToolInput::kWrite: return in.write().file_path();
    case v1::ToolInput::kEdit: return in.edit().file_path();
    case v1::ToolInput::kEditSymbol: return in.edit_symbol().file_path();
    default: return "";
  }
}

}  // namespace odin
