#!/usr/bin/env bash
# Quick start, command 2: build and run the whole test suite (unit tests and
# the integration tests that drive the real binaries) through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh  # nothing to do when everything is installed
# Which folder may include which (the code map in ARCHITECTURE.md).
python3 scripts/check-layering.py
# Formatting (.clang-format).
scripts/format.sh --check
# Configure once: the build re-runs CMake by itself when a CMakeLists.txt
# changes, and a second configure orders one -isystem path differently
# (mit-krb5, from the curl and gRPC packages), which would rebuild everything.
[ -f build/build.ninja ] || cmake -S . -B build -G Ninja
cmake --build build
# The small corpus of real projects the Corpus.SmallRealProjects test runs
# odin on (pinned, cached; nothing to do when it is there).
scripts/fetch-corpus.sh --small
ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 600
