#!/usr/bin/env bash
# The whole test suite: unit and end-to-end tests, then a short fixed-time
# fuzz run of the patch engine.
set -euo pipefail
cd "$(dirname "$0")/.."
# Tests commit in temporary repositories; give git an identity if the
# machine has none (the checkout itself is never committed to).
export GIT_AUTHOR_NAME="${GIT_AUTHOR_NAME:-mini-agent tests}" GIT_AUTHOR_EMAIL="${GIT_AUTHOR_EMAIL:-tests@example.invalid}"
export GIT_COMMITTER_NAME="${GIT_COMMITTER_NAME:-mini-agent tests}" GIT_COMMITTER_EMAIL="${GIT_COMMITTER_EMAIL:-tests@example.invalid}"
go test -count=1 ./...
if [ -d internal/patch ]; then
  go test -run '^$' -fuzz '^FuzzApply$' -fuzztime 20s ./internal/patch
fi
