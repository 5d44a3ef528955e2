// Section 13 of odin_bench: what the everyday-use features cost.
//   - WebFetch through Odin (gate, network worker in its sandbox, libcurl,
//     HTML to Markdown, ledger) against the same fetch and conversion done
//     in-process, on a local page;
//   - the terminal's markdown: a long answer streamed in small deltas and
//     rendered a block at a time, against rendering it once.

#include "bench/web_bench.h"

#include <cstdio>
#include <optional>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "bench/bench_temp.h"
#include "base/file_util.h"
#include "bench/bench_stats.h"
#include "cli/markdown_render.h"
#include "session/runtime.h"
#include "odin/v1/worker.pb.h"
#include "web/html_markdown.h"
#include "web/web_fetch.h"

namespace odin::bench {
namespace {

// A documentation page of about 100 KB: headings, paragraphs, code, a table.
std::string DocsPage() {
  std::string html = "<html><head><title>Docs</title><script>track()</script></head><body><nav>a b c</nav>";
  for (int s = 0; s < 60; ++s) {
    html += "<h2>Section " + std::to_string(s) + "</h2><p>Some <b>text</b> with <a href=\"/x" + std::to_string(s) +
            "\">a link</a> and <code>code()</code>, long enough to wrap in a terminal, about the API.</p>"
            "<pre><code class=\"language-cpp\">int f(int x) {\n  return x + " +
            std::to_string(s) + ";\n}\n</code></pre><table><tr><th>name</th><th>value</th></tr>";
    for (int r = 0; r < 8; ++r) {
      html += "<tr><td>row" + std::to_string(r) + "</td><td>" + std::to_string(r * s) + "</td></tr>";
    }
    html += "</table><ul><li>one</li><li>two <i>em</i></li><li>three</li></ul>";
  }
  return html + "</body></html>";
}

// A model's long answer in markdown, about 20 KB.
std::string LongAnswer() {
  std::string md;
  for (int s = 0; s < 40; ++s) {
    md += "## Step " + std::to_string(s) + "\n\nThe change in `src/file" + std::to_string(s) +
          ".cc` keeps the **invariant** and *documents* it; see the table.\n\n| file | lines |\n|---|---|\n| a.cc | " +
          std::to_string(s) + " |\n| b.cc | 2 |\n\n```cpp\nint g() { return " + std::to_string(s) +
          "; }\n```\n\n- first\n- second\n\n";
  }
  return md;
}

}  // namespace

bool WebFigures(int calls, void (*print)(const char*, const Stats&, double)) {
  printf("web and terminal (WebFetch of a ~100 KB local page, %d calls each, alternating; a 20 KB answer rendered)\n",
         calls);
  httplib::Server server;
  std::string page = DocsPage();
  server.Get("/docs", [&](const httplib::Request&, httplib::Response& res) { res.set_content(page, "text/html"); });
  int port = server.bind_to_any_port("127.0.0.1");
  std::thread serving([&] { server.listen_after_bind(); });
  std::string url = "http://127.0.0.1:" + std::to_string(port) + "/docs";
  std::string allow = "127.0.0.1:" + std::to_string(port);

  StatusOr<std::string> config = odin::bench::BenchTempDir("odin-bench-web-config");
  StatusOr<std::string> ws = odin::bench::BenchTempDir("odin-bench-web");
  bool ok = config.ok() && ws.ok() && MakeDirs(*config + "/odin").ok() &&
            WriteFileAtomic(*config + "/odin/odinconfig.json",
                            nlohmann::json({{"web", {{"allow_private", {allow}}, {"cache_minutes", 0}}},
                                            {"permissions", {{"allow", {"WebFetch(domain:127.0.0.1)"}}}}})
                                .dump())
                .ok();
  std::vector<double> odin_ms, direct_ms, convert_ms;
  if (ok) {
    std::string config_home = getenv("XDG_CONFIG_HOME") ? getenv("XDG_CONFIG_HOME") : "";
    setenv("XDG_CONFIG_HOME", config->c_str(), 1);
    RuntimeFlags flags;
    flags.dir = *ws;
    flags.workers = 1;
    flags.session_kind = "bench";
    flags.mode = "ask";
    StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Start(flags);
    if (config_home.empty()) {
      unsetenv("XDG_CONFIG_HOME");
    } else {
      setenv("XDG_CONFIG_HOME", config_home.c_str(), 1);
    }
    ok = rt.ok();
    FetchOptions direct;
    direct.allow_private.push_back({"127.0.0.1", port});
    std::string args = nlohmann::json({{"url", url}, {"prompt", "summarise"}}).dump();
    for (int i = 0; ok && i < 3 + 2 * calls; ++i) {
      bool through_odin = i % 2 == 0;
      Clock::time_point t0 = Clock::now();
      if (through_odin) {
        ToolCall call;
        call.tool = "WebFetch";
        call.arguments_json = args;
        std::optional<v1::ToolResult> result;
        (*rt)->coordinator().Submit(call, {nullptr, [&](const v1::ToolResult& r, const Status&) { result = r; }});
        while (ok && !result) ok = (*rt)->coordinator().Poll(seconds(1)).ok();
        if (!result || result->status() != v1::TOOL_STATUS_OK) {
          fprintf(stderr, "odin_bench: WebFetch failed: %s\n", result ? result->output_head().c_str() : "");
          ok = false;
          break;
        }
        if (i >= 3) odin_ms.push_back(Ms(Clock::now() - t0));
      } else {
        StatusOr<FetchResult> f = Fetch(url, direct);
        if (!f.ok()) {
          ok = false;
          break;
        }
        Clock::time_point t1 = Clock::now();
        std::string title;
        std::string md = HtmlToMarkdown(f->body, &title, 256 * 1024);
        if (i >= 3) {
          direct_ms.push_back(Ms(Clock::now() - t0));
          convert_ms.push_back(Ms(Clock::now() - t1));
        }
      }
    }
    if (rt.ok()) rt->reset();
  }
  server.stop();
  serving.join();
  if (config.ok()) RemoveTree(*config);
  if (ws.ok()) RemoveTree(*ws);
  if (!ok || odin_ms.empty() || direct_ms.empty()) return false;
  Stats o = Summarize(odin_ms), d = Summarize(direct_ms), c = Summarize(convert_ms);
  print("WebFetch through Odin (gate to ledger)", o, 0);
  print("the same fetch + conversion in-process", d, 0);
  print("  of which HTML to Markdown (gumbo)", c, 0);
  printf("  %-44s %+.2f ms per fetch (medians; gate, worker hop, sandbox, ledger)\n", "what Odin adds to a fetch",
         o.median_ms - d.median_ms);

  // The terminal: a 20 KB answer arriving in 40-byte deltas, rendered a
  // block at a time as the interactive session does, against one render.
  std::string answer = LongAnswer();
  std::vector<double> streamed_ms, once_ms;
  for (int i = 0; i < 20; ++i) {
    Clock::time_point t0 = Clock::now();
    std::string pending, shown;
    for (size_t at = 0; at < answer.size(); at += 40) {
      pending += answer.substr(at, 40);
      size_t complete = CompleteBlocksPrefix(pending);
      if (complete == 0) continue;
      shown += RenderMarkdown(pending.substr(0, complete), {true, 100});
      pending.erase(0, complete);
    }
    shown += RenderMarkdown(pending, {true, 100});
    streamed_ms.push_back(Ms(Clock::now() - t0));
    Clock::time_point t1 = Clock::now();
    std::string whole = RenderMarkdown(answer, {true, 100});
    once_ms.push_back(Ms(Clock::now() - t1));
  }
  print("20 KB answer, streamed and rendered by block", Summarize(streamed_ms), 0);
  print("20 KB answer, rendered once", Summarize(once_ms), 0);
  return true;
}

}  // namespace odin::bench
