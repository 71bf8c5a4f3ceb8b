#!/usr/bin/env bash
# Fetch the published OpenAPI documents (api/openapi-spec: swagger.json and v3/)
# of the Kubernetes releases listed in versions.txt through the Go module proxy
# (`go mod download k8s.io/kubernetes@vX.Y.Z`) and keep only those files in a
# cache outside git. Idempotent: a release already in the cache is skipped.
#
#   spec/releases/fetch.sh            # cache dir: $APICONFORM_RELEASES, else
#                                     # ${XDG_CACHE_HOME:-~/.cache}/apiconform/releases
# The release-history test (spec/compat, TestReleaseHistory) reads the same directory.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="${APICONFORM_RELEASES:-${XDG_CACHE_HOME:-$HOME/.cache}/apiconform/releases}"
mkdir -p "$cache"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# A throwaway module so `go mod download` works from anywhere, whatever GOFLAGS says.
printf 'module apiconform/releases\n\ngo 1.22\n' > "$tmp/go.mod"

grep -v '^\s*#' "$here/versions.txt" | while read -r v _; do
  [ -n "$v" ] || continue
  dest="$cache/$v"
  if [ -s "$dest/swagger.json" ] && [ -d "$dest/v3" ]; then
    echo "releases: $v cached in $dest"
    continue
  fi
  start=$SECONDS
  # go mod download verifies the module against go.sum's checksum database and
  # extracts it into the module cache; "Dir" is where.
  dir="$(cd "$tmp" && GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$v" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p')"
  if [ -z "$dir" ] || [ ! -f "$dir/api/openapi-spec/swagger.json" ]; then
    echo "releases: go mod download k8s.io/kubernetes@$v gave no api/openapi-spec" >&2
    exit 1
  fi
  rm -rf "$dest.tmp" "$dest"
  cp -R "$dir/api/openapi-spec" "$dest.tmp"
  chmod -R u+w "$dest.tmp" # the module cache is read-only
  mv "$dest.tmp" "$dest"
  echo "releases: $v -> $dest ($((SECONDS - start))s)"
done
