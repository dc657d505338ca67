#!/usr/bin/env bash
# bench-failure.sh: times mini-agent's failure extraction against one
# `grep -c FAIL` pass over the same generated log, in one run, and prints
# the ratio beside the target (<= 5x: issue 15 for the Actions log, issue
# 24 for go test -v output).
#
# SHAPE (environment; default gotestv) chooses the log, written once by
# BenchmarkExtractLog:
#   gotestv  the output of a large `go test -v ./...` run, MB (default 200)
#            MB: the real passing go test -v output of the corpus fixture
#            go-more/verbose (testdata/corpus/go-test-v-pass.txt: tests,
#            subtests, t.Log lines, parallel tests, skips, prints) repeated
#            as packages, with one real failing capture (go-test-v.txt,
#            go-interrupted.txt, go-test-v-go114.txt) every 500 packages;
#   actions  BenchmarkExtract's Actions job log, MB (default 100) MB
#            (timestamps, ANSI colours, a BOM, ten steps of noise, the
#            failing one repeating real corpus output).
# The file is read once before timing so both tools read it from the page
# cache.
#
# Rounds interleave the two tools. mini-agent is timed by
# BenchmarkExtractLog (one Extract over the file per iteration: reading,
# cleaning, recognising, rendering-ready result; wall ns/op and the
# process's CPU time per op). The file is given seekable, as ExtractFile
# gives it: the failed step is recognized on a second reading of that step
# only (see internal/failure/deferred.go). grep is timed by bash's `time`
# (wall, user+sys), its count written to a file (to /dev/null GNU grep
# stops at the first match: earlier versions of this script timed that,
# a few milliseconds of start-up instead of a pass over the log). The
# figures are medians over the rounds; each ratio is the median of the
# per-round ratios, for wall time and for CPU time. On a loaded machine the
# CPU time of a 0.2 s run swings by 2x from round to round; the best round
# of each tool (least disturbed) is printed too.
#
# With a git revision BASE, the extractor of that revision (its
# internal/failure, exported with `git archive` and built aside) is timed
# in the same rounds, and the speed-up of the working tree over it is
# printed: before/after figures from one run on the same machine load.
#
# Usage: [SHAPE=gotestv|actions] [MB=N] scripts/bench-failure.sh [ROUNDS [ITERS [BASE]]]
#        (defaults 5, 2, none)
set -euo pipefail

rounds=${1:-5}
iters=${2:-2}
base=${3:-}
shape=${SHAPE:-gotestv}
case $shape in
gotestv) mb=${MB:-200} ;;
actions) mb=${MB:-100} ;;
*) echo "bench-failure: SHAPE must be gotestv or actions" >&2; exit 2 ;;
esac
repo=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
log="$tmp/$shape-${mb}MB.log"
(cd "$repo" && go test -c -o "$tmp/failure.test" ./internal/failure/)
if [ -n "$base" ]; then
	mkdir "$tmp/base"
	git -C "$repo" archive "$base" | tar -x -C "$tmp/base"
	(cd "$tmp/base" && go test -c -o "$tmp/base.test" ./internal/failure/)
fi

bench() { # [BINARY DIR] prints "wall_ms cpu_ms peak_heap_mb peak_rss_mb" of one BenchmarkExtractLog run
	local bin=${1:-$tmp/failure.test} dir=${2:-$repo}
	(cd "$dir/internal/failure" && MINI_AGENT_BENCH_LOG="$log" MINI_AGENT_BENCH_SHAPE="$shape" \
		MINI_AGENT_BENCH_MB="$mb" "$bin" -test.run '^$' \
		-test.bench '^BenchmarkExtractLog$' -test.benchtime "${iters}x") |
		awk '$1 ~ /^BenchmarkExtractLog/ {
			r = "n/a"
			for (i = 2; i < NF; i++) { if ($(i+1) == "ns/op") w = $i; if ($(i+1) == "cpu-ns/op") c = $i; if ($(i+1) == "peak-heap-MB") h = $i; if ($(i+1) == "peak-rss-MB") r = $i }
			printf "%.1f %.1f %.1f %s\n", w / 1e6, c / 1e6, h, r }'
}

grep_once() { # prints "wall_ms cpu_ms" of one grep -c FAIL pass
	# The count goes to a file: with its output on /dev/null, GNU grep
	# stops at the first match (it knows nothing it writes is read), and
	# the "pass" would be a few milliseconds of start-up.
	local TIMEFORMAT='%R %U %S' t
	t=$( { time grep -c FAIL "$log" >"$tmp/grep.count"; } 2>&1)
	[ "$(cat "$tmp/grep.count")" = "$fails" ] || { echo "bench-failure: grep counted $(cat "$tmp/grep.count") lines, not $fails" >&2; exit 1; }
	awk -v t="$t" 'BEGIN { split(t, a, " "); printf "%.1f %.1f\n", a[1] * 1000, (a[2] + a[3]) * 1000 }'
}

median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

bench >/dev/null # writes the log on the first run
cat "$log" >/dev/null
size=$(stat -c %s "$log")
fails=$(grep -c FAIL "$log") # the count every timed grep pass must give
echo "log: $(du -h "$log" | cut -f1) $shape log, $(wc -l <"$log") lines; $(nproc) CPUs," \
	"load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?'); $rounds rounds, $iters extractions per round"

: >"$tmp/rounds"
for r in $(seq "$rounds"); do
	read -r gw gc < <(grep_once)
	read -r mw mc mh mr < <(bench)
	bw=0 bc=0 bh=0 br=0
	if [ -n "$base" ]; then
		read -r bw bc bh br < <(bench "$tmp/base.test" "$tmp/base")
	fi
	echo "$gw $gc $mw $mc $mh $mr $bw $bc $bh $br" >>"$tmp/rounds"
	printf 'round %d: grep -c FAIL %7.1f ms wall %7.1f ms cpu | mini-agent %8.1f ms wall %8.1f ms cpu, peak heap %s MB, peak RSS %s MB\n' \
		"$r" "$gw" "$gc" "$mw" "$mc" "$mh" "$mr"
	if [ -n "$base" ]; then
		printf '         %-36s | base %s %8.1f ms wall %8.1f ms cpu, peak heap %s MB, peak RSS %s MB\n' \
			"" "$base" "$bw" "$bc" "$bh" "$br"
	fi
done

col() { # the median of column c, n/a when a round has none (a base without the metric)
	if awk -v c="$1" '$c == "n/a" { bad = 1 } END { exit !bad }' "$tmp/rounds"; then echo n/a; return; fi
	awk -v c="$1" '{print $c}' "$tmp/rounds" | median
}
mbs() { awk -v s="$size" -v ms="$1" 'BEGIN { printf "%.0f", (ms > 0) ? s / 1048576 / (ms / 1000) : 0 }'; }
rw=$(awk '{print $3 / $1}' "$tmp/rounds" | median)
rc=$(awk '{print ($2 > 0) ? $4 / $2 : 0}' "$tmp/rounds" | median)
printf '\nmedians: grep -c FAIL %.1f ms wall, %.1f ms cpu; mini-agent %.1f ms wall, %.1f ms cpu (%s MB/s wall, %s MB/s cpu); peak heap %s MB, peak RSS %s MB\n' \
	"$(col 1)" "$(col 2)" "$(col 3)" "$(col 4)" "$(mbs "$(col 3)")" "$(mbs "$(col 4)")" "$(col 5)" "$(col 6)"
if [ -n "$base" ]; then
	printf 'medians: base %s %.1f ms wall, %.1f ms cpu (%s MB/s wall, %s MB/s cpu); peak heap %s MB, peak RSS %s MB\n' \
		"$base" "$(col 7)" "$(col 8)" "$(mbs "$(col 7)")" "$(mbs "$(col 8)")" "$(col 9)" "$(col 10)"
fi
printf '%-28s %8s   %s\n' "ratio (mini-agent / grep)" "value" "target"
printf '%-28s %7.1fx   <= 5x\n' "wall time" "$rw"
printf '%-28s %7.1fx   <= 5x\n' "CPU time" "$rc"
best() { awk -v c="$1" '{print $c}' "$tmp/rounds" | sort -g | head -1; }
printf '%-28s %7.1fx   (best rounds: grep %s ms, mini-agent %s ms cpu)\n' "CPU time, best rounds" \
	"$(awk -v a="$(best 4)" -v b="$(best 2)" 'BEGIN { print (b > 0) ? a / b : 0 }')" "$(best 2)" "$(best 4)"
if [ -n "$base" ]; then
	bwr=$(awk '{print $7 / $1}' "$tmp/rounds" | median)
	bcr=$(awk '{print ($2 > 0) ? $8 / $2 : 0}' "$tmp/rounds" | median)
	printf '%-28s %7.1fx wall, %.1fx CPU\n' "base $base / grep" "$bwr" "$bcr"
	printf '%-28s %7.2fx wall, %.2fx CPU (medians of per-round ratios)\n' "speed-up over base" \
		"$(awk '{print ($3 > 0) ? $7 / $3 : 0}' "$tmp/rounds" | median)" "$(awk '{print ($4 > 0) ? $8 / $4 : 0}' "$tmp/rounds" | median)"
fi
