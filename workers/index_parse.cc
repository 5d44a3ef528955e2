#include "workers/index_parse.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/sha256.h"
#include "base/unique_fd.h"
#include "tools/tool_input.h"
#include "tools/tool_result.h"
#include "tools/workspace_path.h"

namespace odin {
namespace {

// Reads one file for the index: a regular file inside the workspace, met
// without following a symlink at its last component.
Status ReadIndexedFile(const std::string& workspace, const std::string& rel, std::string* content, struct stat* st) {
  if (rel.empty() || rel[0] == '/') return Status::InvalidArgument(rel, "not a relative path");
  std::string given = workspace + "/" + rel;
  ASSIGN_OR_RETURN(std::string resolved, ResolveWorkspacePath(given, workspace));
  if (resolved != given) return Status::InvalidArgument(rel, "reached through a symlink");
  UniqueFd fd(open(resolved.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  if (!fd.valid()) return PosixError(rel, errno);
  if (fstat(fd.get(), st) != 0) return PosixError(rel, errno);
  if (!S_ISREG(st->st_mode)) return Status::InvalidArgument(rel, "not a regular file");
  if (static_cast<uint64_t>(st->st_size) > index::kMaxIndexedFileBytes) {
    return Status::ResourceExhausted(rel, "larger than " + std::to_string(index::kMaxIndexedFileBytes) + " bytes");
  }
  content->resize(static_cast<size_t>(st->st_size));
  size_t got = 0;
  while (got < content->size()) {
    ssize_t n = read(fd.get(), content->data() + got, content->size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return PosixError(rel, errno);
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  content->resize(got);  // shrank meanwhile
  return Status::OK();
}

}  // namespace

std::string RunIndexParse(const v1::ToolRequest& req, const std::string& workspace, index::Extractor* extractor,
                          const std::function<void()>& tick, v1::ToolResult* r) {
  r->set_execution_id(req.execution_id());
  if (!req.input().has_index_parse()) return FailResult(r, v1::TOOL_STATUS_ERROR, MissingInput(kIndexParseTool));
  v1::IndexParseOutput* out = r->mutable_index_parse();
  uint64_t lines = 0;
  size_t parsed = 0;
  std::string content;
  for (const std::string& rel : req.input().index_parse().paths()) {
    tick();
    v1::IndexedFile* f = out->add_files();
    f->set_path(rel);
    index::Language language = index::LanguageForPath(rel);
    struct stat st {};
    Status read = language == index::Language::kNone ? Status::InvalidArgument(rel, "not a language the index parses")
                                                     : ReadIndexedFile(workspace, rel, &content, &st);
    if (!read.ok()) {
      f->set_error(read.ToString());
      continue;
    }
    index::FileSymbols symbols = extractor->Extract(language, content);
    f->set_language(index::LanguageName(language));
    f->set_sha256(Sha256Hex(content));
    f->set_size_bytes(content.size());
    f->set_mtime_ns(static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec);
    f->set_lines(symbols.lines);
    f->set_has_errors(symbols.has_errors);
    for (const index::Symbol& s : symbols.symbols) {
      v1::IndexedSymbol* o = f->add_symbols();
      o->set_kind(static_cast<uint32_t>(s.kind));
      o->set_name(s.name);
      o->set_qualified_name(s.qualified_name);
      o->set_start_byte(s.start_byte);
      o->set_end_byte(s.end_byte);
      o->set_start_line(s.start_line);
      o->set_end_line(s.end_line);
      o->set_parent(s.parent);
      o->set_disambiguator(s.disambiguator);
    }
    for (const index::Reference& ref : symbols.references) {
      v1::IndexedReference* o = f->add_references();
      o->set_name(ref.name);
      o->set_from(ref.from);
      o->set_call(ref.call);
      o->set_count(ref.count);
      for (uint32_t l : ref.lines) o->add_lines(l);
    }
    lines += symbols.lines;
    ++parsed;
  }
  r->set_status(v1::TOOL_STATUS_OK);
  return "parsed " + std::to_string(parsed) + " of " + std::to_string(out->files_size()) + " files, " +
         std::to_string(lines) + " lines\n";
}

}  // namespace odin
