# Sourced by the scripts that build a library from Debian's own source
# (build-zeromq.sh, build-spdlog.sh). fetch_debian_source SOURCE VERSION DIR
# unpacks the source package SOURCE at VERSION (the installed -dev package's
# source version: same code, Debian's patches applied) into DIR, through a
# private source list: the system's apt setup is left as it is. DIR's parent
# is the caller's scratch directory (removed by the caller). Errors name the
# package and exit.

# The tools a build from source needs; install-deps.sh installs them.
require_build_tools() {
  local tool
  for tool in dpkg-source cmake ninja; do
    if ! command -v "$tool" >/dev/null 2>&1; then
      echo "$(basename "$0" .sh): $tool is missing (scripts/install-deps.sh installs it)" >&2
      exit 1
    fi
  done
}

fetch_debian_source() {
  local source="$1" version="$2" dir="$3"
  # apt's state beside DIR, in the caller's scratch directory: the source
  # index is read once however many packages the caller fetches.
  local work
  work="$(dirname "$dir")/apt"
  local apt=(-o Dir::Etc::sourcelist="$work/src.sources" -o Dir::Etc::sourceparts=- -o Dir::State::Lists="$work/lists"
    -o Dir::Cache="$work/cache" -o Debug::NoLocking=1)
  if [ ! -f "$work/updated" ]; then
    mkdir -p "$work/lists/partial"
    chmod 755 "$work"  # apt downloads as _apt
    cat >"$work/src.sources" <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    if ! apt-get "${apt[@]}" -qq update >"$work/update.log" 2>&1; then
      echo "$(basename "$0" .sh): cannot read Debian's source index: $(grep -m1 -E '^(E|W):' "$work/update.log")" >&2
      exit 1
    fi
    touch "$work/updated"
  fi
  mkdir -p "$work/dl-$source"
  chmod 755 "$work/dl-$source"
  if ! (cd "$work/dl-$source" && apt-get "${apt[@]}" -qq source --download-only "$source=$version") >"$work/source.log" 2>&1; then
    echo "$(basename "$0" .sh): cannot fetch the source of $source $version: $(grep -m1 '^E:' "$work/source.log")" >&2
    exit 1
  fi
  dpkg-source --no-check -x "$work/dl-$source/${source}_"*.dsc "$dir" >/dev/null
}
