#!/usr/bin/env bash
# The whole test suite: unit and end-to-end tests (including the real
# action.yml run in nektos/act), the concurrent packages under the race
# detector, then short fixed-count fuzz runs of the patch engine, the search
# matcher, the failure extractor (error-word scan, line reader, ANSI stripping,
# go test -json decoder, deferred reading, quiet path) and the diff
# anti-pattern checks.
# Never pass -short here: it skips the slow end-to-end tests, which this
# script exists to run (`go test -short ./...` is the quick suite for working).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:$(go env GOPATH)/bin"

# The action's end-to-end test needs act (host mode, no Docker); it comes
# from the Go module proxy. With it installed the test must run, not skip.
if ! command -v act >/dev/null 2>&1; then
  echo "installing nektos/act for the action end-to-end test"
  go install github.com/nektos/act@v0.2.89
fi
export MINI_AGENT_REQUIRE_ACT=1

# Tests commit in temporary repositories; give git an identity if the
# machine has none (the checkout itself is never committed to).
export GIT_AUTHOR_NAME="${GIT_AUTHOR_NAME:-mini-agent tests}" GIT_AUTHOR_EMAIL="${GIT_AUTHOR_EMAIL:-tests@example.invalid}"
export GIT_COMMITTER_NAME="${GIT_COMMITTER_NAME:-mini-agent tests}" GIT_COMMITTER_EMAIL="${GIT_COMMITTER_EMAIL:-tests@example.invalid}"

# Everything but the slow packages, under go test's default per-package
# timeout; then the slow ones with an explicit, generous one (a cold run of
# internal/actiontest took 586 s on a loaded machine, beside the default
# 10 minutes).
slow=(./internal/actiontest/ ./eval/ ./cmd/mini-agent/)
go test -count=1 $(go list ./... | grep -v -e '/internal/actiontest$' -e '/eval$' -e '/cmd/mini-agent$')
go test -count=1 -timeout 30m "${slow[@]}"
# The concurrent parts again under the race detector.
go test -race -count=1 -timeout 20m ./agent/... ./tools/ ./internal/proc/ ./internal/snapshot/ ./internal/pipeline/ ./ghapi/...
# Fuzz budgets are execution counts, not durations: a duration -fuzztime
# can fail with a bare "context deadline exceeded" on a loaded machine (a
# race in Go's fuzz coordinator, golang/go#75804, fixed in Go 1.27; no
# crasher is involved). Each count is ~10-20 s here on two loaded cores.
go test -run '^$' -fuzz '^FuzzApply$' -fuzztime 200000x -fuzzminimizetime 3s ./internal/patch
go test -run '^$' -fuzz '^FuzzSearchMatcher$' -fuzztime 150000x -fuzzminimizetime 3s ./tools
go test -run '^$' -fuzz '^FuzzLooksLikeError$' -fuzztime 300000x -fuzzminimizetime 3s ./internal/failure
go test -run '^$' -fuzz '^FuzzLineReader$' -fuzztime 1000x -fuzzminimizetime 3s ./internal/failure
go test -run '^$' -fuzz '^FuzzStripANSI$' -fuzztime 200000x -fuzzminimizetime 3s ./internal/failure
go test -run '^$' -fuzz '^FuzzEventDecoder$' -fuzztime 200000x -fuzzminimizetime 3s ./internal/failure
go test -run '^$' -fuzz '^FuzzDeferredReading$' -fuzztime 2000x -fuzzminimizetime 3s ./internal/failure
go test -run '^$' -fuzz '^FuzzQuiet$' -fuzztime 5000x -fuzzminimizetime 3s ./internal/failure
go test -run '^$' -fuzz '^FuzzDiffcheck$' -fuzztime 150000x -fuzzminimizetime 3s ./internal/diffcheck
