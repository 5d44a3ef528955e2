#!/usr/bin/env bash
# Fetches the OpenTelemetry protocol's .proto files (opentelemetry-proto
# v1.4.0, Apache-2.0) that Odin's telemetry encodes OTLP with, into
# third_party/opentelemetry-proto (not committed). Debian 12 packages no
# OpenTelemetry C++ SDK, and the definitions ship on npm only inside other
# packages: @elastic/mockotlpserver carries them unchanged (its
# opentelemetry/proto/collector/README.md names the upstream tag). `npm
# pack` only downloads the package. Safe to run again: a VERSION that
# matches is left alone.
set -euo pipefail
cd "$(dirname "$0")/.."

package="@elastic/mockotlpserver@0.10.0"
upstream="v1.4.0"
dest="third_party/opentelemetry-proto"
if [ -f "$dest/VERSION" ] && [ "$(cat "$dest/VERSION")" = "$upstream $package" ]; then
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "fetch-otlp-protos: npm is missing (scripts/install-deps.sh installs it)" >&2
  exit 1
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack "$package" --silent >/dev/null)
tar -xzf "$tmp"/elastic-mockotlpserver-*.tgz -C "$tmp"
if ! grep -q "tag/hash $upstream" "$tmp/package/opentelemetry/proto/collector/README.md"; then
  echo "fetch-otlp-protos: $package does not carry opentelemetry-proto $upstream" >&2
  exit 1
fi
rm -rf "$dest"
mkdir -p "$dest"
for f in common/v1/common.proto resource/v1/resource.proto trace/v1/trace.proto metrics/v1/metrics.proto \
         collector/trace/v1/trace_service.proto collector/metrics/v1/metrics_service.proto; do
  mkdir -p "$dest/opentelemetry/proto/$(dirname "$f")"
  cp "$tmp/package/opentelemetry/proto/$f" "$dest/opentelemetry/proto/$f"
done
cp "$tmp/package/LICENSE" "$dest/LICENSE"
echo "$upstream $package" > "$dest/VERSION"
