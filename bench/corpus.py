#!/usr/bin/env python3
"""Drives odin on a corpus of real projects nobody here wrote (issue 47).

For each project of bench/corpus/projects.json (fetched by
scripts/fetch-corpus.sh into the cache), in a fresh git repository copied
from the cache for every case, against fake_llm_server scripted to Read a
file, make one EditTool call, then claim it is done, through `odin -p`:

  correct  a semantics-preserving, type-correct edit, --profile fast: it must
           validate clean and the run must end `done` (else FALSE BLOCK);
  callee   a signature change in one file that breaks a caller in another
           file, in the default profile (auto): the run must not end `done`,
           and validation must name the expected diagnostic ("validation") or
           a failed check's output one of expect_check ("checks"); else
           MISSED ERROR, unless the case lists a known_gap (printed as such;
           a known gap that is caught fails, so the list stays true);
  caller   a call in the edited file that no longer type-checks against a
           declaration in another file: the same expectation;
  tests    the correct edit again with --profile auto: the test command Odin
           detects must be the project's (else WRONG TEST COMMAND), and it
           must run in the sandbox (passed or failed, not not_run or
           not_applicable).

Validation latency is the lsp_check execution's duration in the ledger
(`odin show ID --json`, duration_us), which includes the language server's
start for the first file of a session. Prints a table; exits 1 on any false
block, missed error, unvalidated language, wrong test command, tests
that fail or cannot run in the sandbox, crash or timeout; 0 otherwise.
A project whose toolchain is missing prints "skipped: <why>".
Python 3 standard library only.

  python3 bench/corpus.py [--small|--all] [--bin DIR] [--cache DIR] [--only NAME]
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MANIFEST = os.path.join(REPO, "bench", "corpus", "projects.json")


def default_cache():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "odin", "corpus")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


class Failure(Exception):
    pass


def run(argv, cwd, env=None, timeout=600):
    return subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=timeout)


def missing_toolchain(project, bin_dir):
    missing = []
    for tool in project.get("toolchain", []):
        if shutil.which(tool) is None:
            missing.append(tool)
    if project["language"] == "Rust":
        # A rustup proxy without the toolchain answers `cargo` but cannot run.
        r = subprocess.run(["cargo", "--version"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) \
            if shutil.which("cargo") else None
        if r is not None and r.returncode != 0:
            missing.append("a working cargo")
    return missing


def make_workspace(project, cache):
    src = os.path.join(cache, "src", "%s-%s" % (project["name"], project["version"]))
    if not os.path.isdir(src):
        raise Failure("not fetched: %s (run scripts/fetch-corpus.sh%s)" %
                      (src, "" if "small" in project["sets"] else " --all"))
    ws = tempfile.mkdtemp(prefix="odin-corpus-%s-" % project["name"])
    shutil.copytree(src, ws, dirs_exist_ok=True, symlinks=True)
    stamp = os.path.join(ws, ".odin-corpus-sha256")
    if os.path.exists(stamp):
        os.unlink(stamp)
    if project.get("node_tools"):
        tools = os.path.join(cache, "node-tools", "node_modules")
        if not os.path.isdir(tools):
            raise Failure("node test runners not fetched (run scripts/fetch-corpus.sh)")
        shutil.copytree(tools, os.path.join(ws, "node_modules"), symlinks=True, dirs_exist_ok=True)
    for argv in project.get("prepare", []):
        r = run(argv, ws)
        if r.returncode != 0:
            raise Failure("prepare %s failed: %s" % (" ".join(argv), (r.stdout + r.stderr)[-800:]))
    git = ["git", "-c", "user.name=corpus", "-c", "user.email=corpus@localhost", "-c", "init.defaultBranch=main"]
    run(git + ["init", "-q"], ws)
    with open(os.path.join(ws, ".git", "info", "exclude"), "a") as f:
        for pattern in project.get("ignore", []):
            f.write(pattern + "\n")
    run(git + ["add", "-A"], ws)
    r = run(git + ["commit", "-q", "-m", "%s %s" % (project["name"], project["version"])], ws)
    if r.returncode != 0:
        raise Failure("git commit failed: %s" % r.stderr[-400:])
    return ws


def count_files(ws):
    r = run(["git", "ls-files"], ws)
    return len([l for l in r.stdout.splitlines() if l.strip()])


def check_edit(ws, edit):
    with open(os.path.join(ws, edit["file"]), encoding="utf-8", errors="surrogateescape") as f:
        n = f.read().count(edit["old"])
    if n != 1:
        raise Failure("corpus manifest: old string occurs %d times in %s" % (n, edit["file"]))


def start_model(bin_dir, script, tmp):
    path = os.path.join(tmp, "script.json")
    with open(path, "w") as f:
        json.dump(script, f)
    proc = subprocess.Popen([os.path.join(bin_dir, "fake_llm_server"), "--script", path, "--log",
                             os.path.join(tmp, "model.log")], stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if not line.startswith("PORT="):
        proc.kill()
        raise Failure("fake_llm_server did not start: %r" % line)
    return proc, "http://127.0.0.1:%d/v1" % int(line[5:])


def agent_run(bin_dir, ws, project, edit, profile, timeout):
    """One `odin -p` run: Read, EditTool, a claim. Returns a dict of facts."""
    claim = {"text": "Done: the change is complete and type-correct."}
    script = {"responses": [
        {"tool_calls": [{"name": "Read", "arguments": {"file_path": edit["file"]}}]},
        {"tool_calls": [{"name": "EditTool", "arguments": {"file_path": edit["file"], "old_string": edit["old"],
                                                            "new_string": edit["new"]}}]},
    ] + [claim] * 8}
    tmp = tempfile.mkdtemp(prefix="odin-corpus-model-")
    model, url = start_model(bin_dir, script, tmp)
    env = dict(os.environ)
    env.update(project.get("env", {}))
    env["OPENAI_BASE_URL"] = url
    env["OPENAI_API_KEY"] = "corpus"
    # A user configuration of the run's own, never the user's. In it, more
    # time for a language server's diagnostics than the default 5 s: run
    # beside the other tests (ctest -j2), gopls and tsserver have taken
    # longer, and what is measured here is whether validation is right.
    config = os.path.join(tmp, "config")
    os.makedirs(os.path.join(config, "odin"))
    with open(os.path.join(config, "odin", "odinconfig.json"), "w") as f:
        json.dump({"validation": {"file_timeout_ms": 30000}}, f)
    env["XDG_CONFIG_HOME"] = config
    argv = [os.path.join(bin_dir, "odin"), "-p", "Make the change to %s." % edit["file"], "--output-format", "json",
            "--profile", profile, "--max-wall-seconds", str(timeout)]
    facts = {"exit": None, "status": None, "result": None, "stderr": "", "timed_out": False, "argv": argv,
             "wall_ms": 0}
    t0 = time.monotonic()
    try:
        p = subprocess.Popen(argv, cwd=ws, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True)
        try:
            out, err = p.communicate(timeout=timeout + 30)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, err = p.communicate()
            facts["timed_out"] = True
        facts["exit"] = p.returncode
        facts["stderr"] = err
        facts["wall_ms"] = int((time.monotonic() - t0) * 1000)
        try:
            facts["result"] = json.loads(out.strip().splitlines()[-1]) if out.strip() else None
        except (ValueError, IndexError):
            facts["result"] = None
            facts["stdout"] = out
        if facts["result"]:
            facts["status"] = facts["result"].get("status")
    finally:
        model.kill()
        model.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    # The validation of the edited file, from the report, and its duration from the ledger.
    facts["validation"] = None
    facts["latency_ms"] = None
    facts["validation_text"] = ""
    report = (facts["result"] or {}).get("report") or {}
    for f in report.get("files", []):
        if f.get("path") == edit["file"] and f.get("validation"):
            facts["validation"] = f["validation"]
    v = facts["validation"]
    if v and v.get("execution_id"):
        r = run([os.path.join(bin_dir, "odin"), "show", v["execution_id"], "--json"], ws)
        try:
            shown = json.loads(r.stdout)
            facts["latency_ms"] = shown.get("duration_us", 0) // 1000
            facts["validation_text"] = (shown.get("output_head") or "") + (shown.get("output_tail") or "")
        except ValueError:
            pass
        facts["validation_text"] += "\n" + (v.get("detail") or "")
    facts["checks"] = report.get("checks", [])
    return facts


def describe(facts):
    v = facts.get("validation") or {}
    return "exit %s, status %s, validation %s (%s, %s new errors)%s" % (
        facts["exit"], facts["status"], v.get("status"), v.get("validator"), v.get("new_errors"),
        ", TIMED OUT" if facts["timed_out"] else "")


def run_project(project, bin_dir, cache, timeout):
    row = {"language": project["language"], "project": "%s@%s" % (project["name"], project["version"]),
           "files": "-", "lat_correct": "-", "lat_callee": "-", "lat_caller": "-", "caught": "-",
           "tests_cmd": "-", "tests_result": "-", "verdict": "", "problems": [], "gaps": []}
    missing = missing_toolchain(project, bin_dir)
    if missing:
        row["verdict"] = "skipped: %s missing" % ", ".join(missing)
        return row
    problems = row["problems"]
    workspaces = []

    def case(edit, profile):
        ws = make_workspace(project, cache)
        workspaces.append(ws)
        check_edit(ws, edit)
        return ws, agent_run(bin_dir, ws, project, edit, profile, timeout)

    def repro(ws, facts):
        return "in %s: %s" % (ws, " ".join(facts["argv"]))

    try:
        ws, correct = case(project["correct"], "fast")
        row["files"] = str(count_files(ws))
        row["lat_correct"] = str(correct["latency_ms"]) if correct["latency_ms"] is not None else "-"
        log("%s correct: %s" % (row["project"], describe(correct)))
        v = correct["validation"] or {}
        if correct["timed_out"] or correct["exit"] is None or correct["exit"] < 0:
            problems.append("CRASH/TIMEOUT on the correct edit: %s (%s)" % (describe(correct), repro(ws, correct)))
        elif correct["exit"] != 0 or correct["status"] != "done" or v.get("status") in ("errors", "timed_out"):
            problems.append("FALSE BLOCK: correct edit of %s: %s; validation said: %s (%s)" % (
                project["correct"]["file"], describe(correct), correct["validation_text"].strip()[:600],
                repro(ws, correct)))
        elif v.get("status") == "clean" and project.get("validation_gap"):
            problems.append("VALIDATION GAP NOW CLOSED: remove validation_gap from projects.json: %s" %
                            project["validation_gap"])
        elif v.get("status") != "clean" and project.get("validation_gap"):
            row["gaps"].append("%s correct: not validated: %s" % (row["project"], project["validation_gap"]))
        elif v.get("status") != "clean":
            # Not blocked, but nothing checked it: the broken edits will be missed too.
            problems.append("NOT VALIDATED: correct edit of %s: %s; validation said: %s (%s)" % (
                project["correct"]["file"], describe(correct), correct["validation_text"].strip()[:600],
                repro(ws, correct)))

        caught = []
        for kind in ("broken_callee", "broken_caller"):
            edit = project[kind]
            # The profile a user gets by default: validation, then the
            # project's checks when the model claims completion.
            ws, broken = case(edit, "auto")
            lat = str(broken["latency_ms"]) if broken["latency_ms"] is not None else "-"
            row["lat_callee" if kind == "broken_callee" else "lat_caller"] = lat
            log("%s %s: %s" % (row["project"], kind, describe(broken)))
            text = broken["validation_text"]
            v = broken["validation"] or {}
            failed_checks = "\n".join(c.get("output_tail") or "" for c in broken["checks"] if c.get("status") == "failed")
            by = ""
            if broken["status"] != "done" and v.get("status") == "errors" and edit["expect"].lower() in text.lower():
                by = "validation"
            elif broken["status"] != "done" and any(e.lower() in failed_checks.lower()
                                                     for e in edit.get("expect_check", [])):
                by = "checks"
            gap = edit.get("known_gap")
            if broken["timed_out"] or broken["exit"] is None or broken["exit"] < 0:
                problems.append("CRASH/TIMEOUT on %s: %s (%s)" % (kind, describe(broken), repro(ws, broken)))
                caught.append("no")
            elif by:
                caught.append(by)
                if gap:
                    problems.append("KNOWN GAP NOW CAUGHT (%s, by %s): remove known_gap from projects.json: %s" % (
                        kind, by, gap))
            elif gap:
                caught.append("gap")
                row["gaps"].append("%s %s: %s" % (row["project"], kind, gap))
            else:
                caught.append("no")
                problems.append("MISSED ERROR (%s): %s in %s should report '%s' in %s: %s; validation said: %s; "
                                "failed checks said: %s (%s)" % (
                                    kind, edit["file"], row["project"], edit["expect"], edit["expect_in"],
                                    describe(broken), text.strip()[:600] or "(nothing)",
                                    failed_checks.strip()[-600:] or "(nothing)", repro(ws, broken)))
        row["caught"] = "/".join(caught)

        ws, full = case(project["correct"], "auto")
        log("%s tests: %s" % (row["project"], describe(full)))
        tests = [c for c in full["checks"] if c.get("name") == "tests"]
        t = tests[0] if tests else {}
        row["tests_cmd"] = t.get("command") or "(none)"
        row["tests_result"] = t.get("status") or "-"
        if full["timed_out"]:
            problems.append("TIMEOUT running the checks: %s (%s)" % (describe(full), repro(ws, full)))
        expected = project["expected_tests"]
        expected = [expected] if isinstance(expected, str) else expected
        if row["tests_cmd"] not in expected:
            problems.append("WRONG TEST COMMAND: detected %r, the project's is %r (%s)" % (
                row["tests_cmd"], project["expected_tests"], repro(ws, full)))
        elif t.get("status") not in ("passed", "failed"):
            problems.append("TESTS DID NOT RUN: %s %s (%s)" % (t.get("status"), t.get("detail", ""), repro(ws, full)))
        elif t.get("status") == "failed":
            problems.append("TESTS FAILED in the sandbox after a correct edit: %s, exit %s: %s (%s)" % (
                row["tests_cmd"], t.get("exit_code"), "\n".join((t.get("output_tail") or "").splitlines()[-8:]),
                repro(ws, full)))
        other = [c for c in full["checks"] if c.get("name") != "tests" and c.get("status") not in
                 ("passed", "not_applicable")]
        for c in other:
            problems.append("CHECK %s %s: `%s` exit %s: %s (%s)" % (
                c.get("name"), c.get("status"), c.get("command"), c.get("exit_code"),
                "\n".join((c.get("output_tail") or "").splitlines()[-6:]), repro(ws, full)))
    except Failure as e:
        problems.append("RUNNER: %s" % e)
    except subprocess.TimeoutExpired as e:
        problems.append("TIMEOUT: %s" % e)
    row["verdict"] = "ok" if not problems else "FAIL (%d)" % len(problems)
    if not problems or not os.environ.get("ODIN_CORPUS_KEEP"):
        for ws in workspaces:
            shutil.rmtree(ws, ignore_errors=True)
    return row


COLUMNS = [("language", "language"), ("project", "project@version"), ("files", "files"),
           ("lat_correct", "valid. correct ms"), ("lat_callee", "valid. callee-broken ms"),
           ("lat_caller", "valid. caller-broken ms"), ("caught", "caught callee/caller"),
           ("tests_cmd", "test command detected"), ("tests_result", "test result"), ("verdict", "verdict")]


def print_table(rows):
    widths = [max(len(title), *(len(str(r[key])) for r in rows)) for key, title in COLUMNS]
    line = lambda cells: " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)).rstrip()
    print(line([t for _, t in COLUMNS]))
    print("-+-".join("-" * w for w in widths))
    for r in rows:
        print(line([r[k] for k, _ in COLUMNS]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--small", action="store_true", help="the small set (the test suite's)")
    group.add_argument("--all", action="store_true", help="every project (the benchmark; the default)")
    ap.add_argument("--bin", default=os.path.join(REPO, "build", "bin"), help="odin's binaries (default build/bin)")
    ap.add_argument("--cache", default=default_cache(), help="the corpus cache (scripts/fetch-corpus.sh's DEST)")
    ap.add_argument("--only", action="append", help="only the project NAME (repeatable)")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per odin run")
    args = ap.parse_args()
    set_name = "small" if args.small else "all"
    bin_dir = os.path.abspath(args.bin)
    for b in ("odin", "fake_llm_server"):
        if not os.access(os.path.join(bin_dir, b), os.X_OK):
            print("corpus: %s not found in %s (build first, or --bin DIR)" % (b, bin_dir), file=sys.stderr)
            return 2
    with open(MANIFEST) as f:
        projects = [p for p in json.load(f)["projects"] if set_name in p["sets"]]
    if args.only:
        projects = [p for p in projects if p["name"] in args.only]
    rows = []
    t0 = time.monotonic()
    for p in projects:
        log("corpus: %s@%s (%s)" % (p["name"], p["version"], p["language"]))
        rows.append(run_project(p, bin_dir, args.cache, args.timeout))
    print("Corpus (%s set), odin from %s, %.0f s" % (set_name, bin_dir, time.monotonic() - t0))
    print_table(rows)
    failed = False
    for r in rows:
        if r["verdict"].startswith("skipped"):
            print("%s: %s" % (r["project"], r["verdict"]))
        for gap in r["gaps"]:
            print("KNOWN GAP (missed, listed in projects.json, not counted as a failure): %s" % gap)
        for prob in r["problems"]:
            failed = True
            print("%s: %s" % (r["project"], prob))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
