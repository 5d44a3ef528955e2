#!/usr/bin/env python3
"""Odin's programs load no shared library but libc and libm (and, for the
network worker, libcurl and gumbo): cmake/odin_programs.cmake links the rest
statically, because each shared library costs every start of every worker
(docs/performance.md, "Start-up"). A library that comes back shared, from a
new dependency or a CMakeLists edit, fails here rather than only in a
benchmark. Usage: check_programs.py BIN_DIR"""
import subprocess
import sys

# ld.so itself is named by libgcc's unwinder (_dl_find_object); it is loaded anyway.
ALWAYS = {"libc.so.6", "libm.so.6", "ld-linux-x86-64.so.2"}
PROGRAMS = {
    "odin": ALWAYS,
    "odin-sandbox": ALWAYS,
    "odin-worker": ALWAYS,
    "odin-lsp-host": ALWAYS,
    "odin-mcp-worker": ALWAYS,
    "odin-subagent": ALWAYS,
    # libcurl, its TLS stack and gumbo stay Debian's: they parse what comes
    # from the network, and security updates reach them without a rebuild.
    "odin-web-worker": ALWAYS | {"libcurl.so.4", "libgumbo.so.1"},
}


def needed(path):
    out = subprocess.run(["readelf", "-d", path], check=True, capture_output=True, text=True).stdout
    return {line.split("[", 1)[1].split("]", 1)[0] for line in out.splitlines() if "(NEEDED)" in line}


def main():
    bin_dir = sys.argv[1]
    bad = []
    for program, allowed in PROGRAMS.items():
        extra = needed(f"{bin_dir}/{program}") - allowed
        if extra:
            bad.append(f"{program} loads {', '.join(sorted(extra))}")
    if bad:
        print("programs that load shared libraries besides libc: " + "; ".join(bad))
        return 1
    print(f"{len(PROGRAMS)} programs load only libc and libm (and libcurl and gumbo for the network worker)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
