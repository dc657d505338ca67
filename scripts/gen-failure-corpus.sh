#!/usr/bin/env bash
# gen-failure-corpus.sh regenerates internal/failure/testdata/corpus from the
# fixture projects in internal/failure/testdata/fixtures by running their real
# (deliberately failing) test suites on this machine and capturing the output
# unmodified. Some captures are then wrapped in the GitHub Actions job-log
# format (timestamps with 7 fractional digits, BOM, groups, ANSI, an ##[error]
# exit line). The *.want.json files are written by hand and are not touched.
#
# Each fixture runs from /home/runner/work/<name>/<name> (the layout of a
# GitHub-hosted runner), so absolute paths in the output look like CI's.
#
# Needs: go, cargo, node + npm (jest, vitest@3, typescript are installed into
# $NPM_DIR, outside the repository), Debian's python3-pytest for pytest
# (PyPI is not reachable here; `apt-get install python3-pytest`), cc and make.
#
# Usage: scripts/gen-failure-corpus.sh [ecosystem...]
#   ecosystems: go cargo node jest vitest ts pytest generic gomore goverbose
#   gopath cargopanic pyitems vitestmerged tsconfig junitcut (default: all; junitcut
#   needs the pytest-items and vitest JUnit files already in the corpus)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
TD=$ROOT/internal/failure/testdata
FIX=$TD/fixtures
OUT=$TD/corpus
NPM_DIR=${NPM_DIR:-/tmp/mini-agent-npm}
RUNNER=/home/runner/work
PYTHON=${PYTHON:-/usr/bin/python3}
RC=$(mktemp -d)
trap 'rm -rf "$RC"' EXIT
mkdir -p "$OUT"

# stage NAME SRC: copy fixture SRC to $RUNNER/NAME/NAME and print that path.
stage() {
	local dir=$RUNNER/$1/$1
	rm -rf "${RUNNER:?}/$1"
	mkdir -p "$dir"
	cp -R "$2"/. "$dir"/
	echo "$dir"
}

# capture FILE DIR CMD...: run CMD in DIR, stdout+stderr to $OUT/FILE, exit
# code to $RC/FILE (non-zero is expected: these suites fail on purpose).
capture() {
	local file=$1 dir=$2
	shift 2
	local rc=0
	(cd "$dir" && "$@") >"$OUT/$file" 2>&1 || rc=$?
	echo "$rc" >"$RC/$file"
	echo "captured $file (exit $rc)"
}

# stamp: prefix each line with a deterministic RFC 3339 timestamp with 7
# fractional digits, the first line preceded by a UTF-8 BOM.
stamp() {
	awk 'BEGIN { t = 0 }
	{
		t += 1234567
		s = int(t / 10000000); f = t % 10000000
		line = sprintf("2024-05-01T12:%02d:%02d.%07dZ %s", int(s / 60) % 60, s % 60, f, $0)
		if (NR == 1) printf "\357\273\277"
		print line
	}'
}

# wrap FILE JOB STEP-COMMAND OUTPUT-FILE RC [SETUP-LINES-FILE]: write
# $OUT/FILE, an Actions job log whose failing step runs STEP-COMMAND and
# printed OUTPUT-FILE (real output) before exiting with RC.
wrap() {
	local file=$1 job=$2 cmd=$3 body=$4 rc=$5
	{
		echo "Current runner version: '2.316.1'"
		echo "##[group]Operating System"
		echo "Ubuntu"
		echo "22.04.4"
		echo "LTS"
		echo "##[endgroup]"
		echo "##[group]Runner Image"
		echo "Image: ubuntu-22.04"
		echo "Version: 20240514.2.0"
		echo "##[endgroup]"
		echo "##[group]GITHUB_TOKEN Permissions"
		echo "Contents: read"
		echo "Metadata: read"
		echo "##[endgroup]"
		echo "Secret source: Actions"
		echo "Prepare workflow directory"
		echo "Prepare all required actions"
		echo "Getting action download info"
		echo "Download action repository 'actions/checkout@v4' (SHA:0ad4b8fadaa221de15dcec353f45205ec38ea70b)"
		echo "Complete job name: $job"
		echo "##[group]Run actions/checkout@v4"
		echo "with:"
		echo "  repository: org/fixture"
		echo "  fetch-depth: 1"
		echo "##[endgroup]"
		echo "Syncing repository: org/fixture"
		echo "##[group]Getting Git version info"
		echo "Working directory is '$RUNNER/fixture/fixture'"
		echo "[command]/usr/bin/git version"
		echo "git version 2.45.1"
		echo "##[endgroup]"
		echo "##[warning]Node.js 16 actions are deprecated. Please update the following actions to use Node.js 20: actions/checkout@v3."
		echo "##[group]Run echo \"warming up\""
		printf '\033[36;1mecho "warming up"\033[0m\n'
		echo "shell: /usr/bin/bash -e {0}"
		echo "##[endgroup]"
		echo "warming up"
		echo "##[group]Run $cmd"
		printf '\033[36;1m%s\033[0m\n' "$cmd"
		echo "shell: /usr/bin/bash -e {0}"
		echo "env:"
		echo "  CI: true"
		echo "##[endgroup]"
		cat "$body"
		echo "##[error]Process completed with exit code $rc."
		echo "Post job cleanup."
		echo "[command]/usr/bin/git version"
		echo "git version 2.45.1"
		echo "Cleaning up orphan processes"
	} | stamp >"$OUT/$file"
	echo "wrapped $file"
}

gen_go() {
	local d
	d=$(stage gofix "$FIX/go")
	capture go-test.txt "$d" go test ./...
	capture go-test-v.txt "$d" go test -v ./calc
	capture go-test-race.txt "$d" go test -race ./racy
	capture go-test-timeout.txt "$d" env SLOW=1 go test -timeout=2s ./slow
	capture go-test-json.jsonl "$d" go test -json ./...
	capture go-test-json-timeout.jsonl "$d" env SLOW=1 go test -json -timeout=2s ./slow
	capture go-test-json-race.jsonl "$d" go test -json -race ./racy
	wrap actions-go.log "test (ubuntu-latest, 1.26)" "go test ./..." "$OUT/go-test.txt" "$(cat "$RC/go-test.txt")"
	wrap actions-go-json.log "test (ubuntu-latest, stable)" "go test -json ./..." "$OUT/go-test-json.jsonl" "$(cat "$RC/go-test-json.jsonl")"
	rm -rf "${RUNNER:?}/gofix"
}

gen_cargo() {
	local d
	d=$(stage rustfix "$FIX/cargo")
	capture cargo-test.txt "$d" env RUST_BACKTRACE=1 cargo test --no-fail-fast --color=never
	capture cargo-test-color.txt "$d" env RUST_BACKTRACE=0 cargo test --no-fail-fast --color=always
	wrap actions-cargo.log "test (ubuntu-latest)" "cargo test --no-fail-fast --color=always" "$OUT/cargo-test-color.txt" "$(cat "$RC/cargo-test-color.txt")"
	rm -rf "${RUNNER:?}/rustfix"
	d=$(stage rustbroken "$FIX/cargo-broken")
	capture cargo-build.txt "$d" env RUST_BACKTRACE=0 cargo test --color=never
	rm -rf "${RUNNER:?}/rustbroken"
}

npm_tools() {
	if [ ! -x "$NPM_DIR/node_modules/.bin/vitest" ] || [ ! -x "$NPM_DIR/node_modules/.bin/jest" ] || [ ! -x "$NPM_DIR/node_modules/.bin/tsc" ]; then
		mkdir -p "$NPM_DIR"
		(cd "$NPM_DIR" && { [ -f package.json ] || npm init -y >/dev/null; } && npm install --no-audit --no-fund jest vitest@3 typescript >/dev/null)
	fi
}

gen_node() {
	local d
	d=$(stage nodefix "$FIX/node")
	capture node-test-tap.txt "$d" node --test --test-reporter=tap
	capture node-test-spec.txt "$d" node --test --test-reporter=spec
	capture node-test-junit.xml "$d" node --test --test-reporter=junit
	rm -rf "${RUNNER:?}/nodefix"
}

gen_jest() {
	local d
	npm_tools
	d=$(stage jestfix "$FIX/jest")
	ln -s "$NPM_DIR/node_modules" "$d/node_modules"
	capture jest.txt "$d" "$NPM_DIR/node_modules/.bin/jest" --ci
	capture jest-color.txt "$d" "$NPM_DIR/node_modules/.bin/jest" --ci --colors
	wrap actions-jest.log "test (ubuntu-latest, node 20)" "npx jest --ci --colors" "$OUT/jest-color.txt" "$(cat "$RC/jest-color.txt")"
	rm -rf "${RUNNER:?}/jestfix"
}

gen_vitest() {
	local d
	npm_tools
	d=$(stage vitestfix "$FIX/vitest")
	ln -s "$NPM_DIR/node_modules" "$d/node_modules"
	capture vitest.txt "$d" "$NPM_DIR/node_modules/.bin/vitest" run
	capture vitest-color.txt "$d" env FORCE_COLOR=1 "$NPM_DIR/node_modules/.bin/vitest" run
	capture vitest-junit.xml "$d" "$NPM_DIR/node_modules/.bin/vitest" run --reporter=junit
	wrap actions-vitest.log "test (ubuntu-latest, node 20)" "npx vitest run" "$OUT/vitest-color.txt" "$(cat "$RC/vitest-color.txt")"
	rm -rf "${RUNNER:?}/vitestfix"
}

gen_ts() {
	local d
	npm_tools
	d=$(stage tsfix "$FIX/ts")
	capture tsc.txt "$d" "$NPM_DIR/node_modules/.bin/tsc" -p . --pretty false
	capture tsc-pretty.txt "$d" "$NPM_DIR/node_modules/.bin/tsc" -p . --pretty true
	rm -rf "${RUNNER:?}/tsfix"
}

gen_pytest() {
	local d
	if ! "$PYTHON" -m pytest --version >/dev/null 2>&1; then
		echo "pytest not available for $PYTHON: skipping (apt-get install python3-pytest)" >&2
		return 0
	fi
	d=$(stage pyfix "$FIX/pytest")
	capture pytest.txt "$d" "$PYTHON" -m pytest -p no:cacheprovider
	capture pytest-v.txt "$d" "$PYTHON" -m pytest -p no:cacheprovider -v
	capture pytest-color.txt "$d" "$PYTHON" -m pytest -p no:cacheprovider --color=yes
	capture pytest-junit.txt "$d" "$PYTHON" -m pytest -p no:cacheprovider -q --junitxml=junit.xml
	cp "$d/junit.xml" "$OUT/pytest-junit.xml"
	rm "$OUT/pytest-junit.txt"
	wrap actions-pytest.log "test (ubuntu-latest, 3.11)" "python -m pytest --color=yes" "$OUT/pytest-color.txt" "$(cat "$RC/pytest-color.txt")"
	rm -rf "${RUNNER:?}/pyfix"
}

gen_generic() {
	local d
	d=$(stage cfix "$FIX/generic")
	capture make.txt "$d" make
	wrap actions-make.log "build (ubuntu-latest)" "make" "$OUT/make.txt" "$(cat "$RC/make.txt")"
	rm -rf "${RUNNER:?}/cfix"
}

gen_gomore() {
	local d
	d=$(stage gomore "$FIX/go-more")
	# -parallel 8: the slow tests run beside the panicking one, whatever
	# GOMAXPROCS is, so the panic interrupts them.
	capture go-interrupted.txt "$d" go test -v -parallel 8 ./interrupted
	capture go-interrupted-json.jsonl "$d" go test -json -parallel 8 ./interrupted
	capture go-golden-json.jsonl "$d" go test -json ./golden
	capture go-golden-oldlog-json.jsonl "$d" go test -json ./golden ./oldlog
	# Go 1.14's go test -v named the test on each streamed log line
	# ("    TestX: file_test.go:12: msg"). Go 1.14 cannot be installed here,
	# so that layout is made from today's real output of the same package
	# by adding the name of the test that is running (see README.md).
	capture go-test-v-current.txt "$d" go test -v ./oldlog
	awk '/^=== (RUN|CONT|NAME) / { name = $3 }
	/^    [^ -][^ ]*\.go:[0-9]+: / { sub(/^    /, "    " name ": ") }
	{ print }' "$OUT/go-test-v-current.txt" >"$OUT/go-test-v-go114.txt"
	rm "$OUT/go-test-v-current.txt"
	wrap actions-go-interrupted.log "test (ubuntu-latest, stable)" "go test -json -parallel 8 ./interrupted" "$OUT/go-interrupted-json.jsonl" "$(cat "$RC/go-interrupted-json.jsonl")"
	rm -rf "${RUNNER:?}/gomore"
}

# gen_goverbose captures the passing go test -v output of go-more/verbose:
# the bulk of a large go test -v log (many tests, subtests, t.Log lines,
# parallel tests, skips, prints), which the extraction benchmark repeats
# around the failing captures (BenchmarkExtract's go-test-v logs).
gen_goverbose() {
	local d
	d=$(stage goverbose "$FIX/go-more")
	capture go-test-v-pass.txt "$d" go test -v -count=1 ./verbose
	rm -rf "${RUNNER:?}/goverbose"
}

# gen_gopath runs a GOPATH-mode package (no go.mod) from /go/src/app, as
# in the golang container images (GOPATH=/go, GOROOT=/usr/local/go).
gen_gopath() {
	local d=/go/src/app
	if [ -e /go ] && [ ! -e /go/.mini-agent-corpus ]; then
		echo "/go exists and was not made by this script: skipping gopath" >&2
		return 0
	fi
	rm -rf /go
	mkdir -p "$d"
	touch /go/.mini-agent-corpus
	cp -R "$FIX/gopath"/. "$d"/
	capture go-gopath.txt "$d" env GO111MODULE=off GOPATH=/go GOFLAGS= go test ./...
	capture go-gopath-json.jsonl "$d" env GO111MODULE=off GOPATH=/go GOFLAGS= go test -json ./...
	rm -rf /go
}

gen_cargopanic() {
	local d
	d=$(stage rustpanic "$FIX/cargo-panic")
	capture cargo-should-panic.txt "$d" env RUST_BACKTRACE=0 cargo test --no-fail-fast --color=never
	capture cargo-should-panic-bt.txt "$d" env RUST_BACKTRACE=1 cargo test --no-fail-fast --color=never
	rm -rf "${RUNNER:?}/rustpanic"
}

gen_pyitems() {
	local d
	if ! "$PYTHON" -m pytest --version >/dev/null 2>&1; then
		echo "pytest not available for $PYTHON: skipping (apt-get install python3-pytest)" >&2
		return 0
	fi
	d=$(stage pyitems "$FIX/pytest-items")
	local args=(-p no:cacheprovider --doctest-glob='*.txt' --doctest-glob='*.rst' --doctest-modules)
	capture pytest-items.txt "$d" "$PYTHON" -m pytest "${args[@]}"
	capture pytest-items-v.txt "$d" "$PYTHON" -m pytest "${args[@]}" -v
	capture pytest-items-junit.txt "$d" "$PYTHON" -m pytest "${args[@]}" -q --junitxml=junit.xml
	cp "$d/junit.xml" "$OUT/pytest-items-junit.xml"
	rm "$OUT/pytest-items-junit.txt"
	wrap actions-pytest-items.log "test (ubuntu-latest, 3.11)" "python -m pytest --doctest-glob='*.txt' --doctest-glob='*.rst' --doctest-modules" "$OUT/pytest-items.txt" "$(cat "$RC/pytest-items.txt")"
	rm -rf "${RUNNER:?}/pyitems"
}

gen_vitestmerged() {
	local d
	npm_tools
	d=$(stage vitestmerged "$FIX/vitest-merged")
	ln -s "$NPM_DIR/node_modules" "$d/node_modules"
	capture vitest-merged.txt "$d" "$NPM_DIR/node_modules/.bin/vitest" run
	capture vitest-merged-color.txt "$d" env FORCE_COLOR=1 "$NPM_DIR/node_modules/.bin/vitest" run
	rm -rf "${RUNNER:?}/vitestmerged"
}

gen_tsconfig() {
	local d
	npm_tools
	d=$(stage tsconfig "$FIX/ts-config")
	capture tsc-config.txt "$d" "$NPM_DIR/node_modules/.bin/tsc" -p . --pretty false
	capture tsc-config-pretty.txt "$d" "$NPM_DIR/node_modules/.bin/tsc" -p . --pretty true
	# The same real output as a task runner shows it, indented by four
	# spaces (the only transformation; see testdata/README.md).
	sed 's/^/    /' "$OUT/tsc-config.txt" >"$OUT/tsc-config-indented.txt"
	rm -rf "${RUNNER:?}/tsconfig"
}

# gen_junitcut writes JUnit files cut off mid-write (a job killed while
# the reporter was writing), from real reports captured above.
gen_junitcut() {
	local n
	n=$(grep -b -o '<testcase classname="test_fixtures" name="test_token_length"' "$OUT/pytest-items-junit.xml" | cut -d: -f1)
	head -c "$((n + 200))" "$OUT/pytest-items-junit.xml" >"$OUT/pytest-items-junit-cut.xml"
	n=$(grep -b -o '</testcase>' "$OUT/vitest-junit.xml" | sed -n 2p | cut -d: -f1)
	head -c "$((n + 40))" "$OUT/vitest-junit.xml" >"$OUT/vitest-junit-cut.xml"
}

ecos=("$@")
[ ${#ecos[@]} -gt 0 ] || ecos=(go cargo node jest vitest ts pytest generic gomore goverbose gopath cargopanic pyitems vitestmerged tsconfig junitcut)
for e in "${ecos[@]}"; do
	"gen_$e"
done
