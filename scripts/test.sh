#!/usr/bin/env bash
# The whole test suite: unit and end-to-end tests, then a short fixed-time
# fuzz run of the patch engine.
set -euo pipefail
cd "$(dirname "$0")/.."
go test -count=1 ./...
if [ -d internal/patch ]; then
  go test -run '^$' -fuzz '^FuzzApply$' -fuzztime 20s ./internal/patch
fi
