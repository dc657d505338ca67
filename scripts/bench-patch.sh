#!/usr/bin/env bash
# bench-patch.sh: times mini-agent's apply_patch tool against `git apply` on
# the same generated files and 3-hunk patches, in one run, and prints the
# ratios beside the targets.
#
# By default (MODE=process) mini-agent runs as a whole process, as a user
# runs it: BenchmarkApplyPatchProcess runs the binary this script builds,
# `mini-agent tool apply_patch --workdir DIR ARGS`, alternating with `git
# apply` on a fresh copy of the same file, both under /usr/bin/time (CPU =
# user + system including each process's start-up; peak RSS = the
# process's maximum). Beside each call the same command applies a one-line
# patch to a one-line file: the peak RSS of that call is what the process
# takes whatever the file (mostly its own ~50 MB binary's pages), and the
# RSS target is read on the peak above it ("rss/size"); the whole peak per
# byte is printed too. With BASE (a git revision), that revision's binary
# is built and timed in the same rounds (before/after figures).
#
# MODE=inprocess times the tool inside the test process instead:
# BenchmarkApplyPatch (tools/apply_patch_bench_test.go) generates a text
# file and a Go file of each size (1, 4 and 8 MB by default), a correct
# 3-hunk unified diff for each, and per iteration runs one apply_patch call
# (parse, locate, rebuild and check the diff, write, Go syntax check) and
# one `git apply` of the same patch on a fresh copy, alternating, so load
# from other processes hits both alike. CPU is user + system time (getrusage
# for mini-agent, the child's rusage for git); peak RSS is the growth of
# mini-agent's high-water mark during the call and git's own maximum RSS
# (from /usr/bin/time). Both must write the same bytes. The figures are
# medians over ROUNDS runs of ITERS calls each.
#
# Usage: [MODE=process|inprocess] scripts/bench-patch.sh [ROUNDS [ITERS [SIZES_MB [BASE]]]]
#        (defaults 5, 3, "1 4 8", none)
# Targets: mini-agent CPU <= 2x git apply's; peak RSS <= 4x the file size.
set -euo pipefail

rounds=${1:-5}
iters=${2:-3}
sizes=${3:-1 4 8}
base=${4:-}
mode=${MODE:-process}
repo=$(cd "$(dirname "$0")/.." && pwd)
command -v git >/dev/null || { echo "bench-patch: git missing" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench-patch: /usr/bin/time missing (apt-get install time)" >&2; exit 2; }
case $mode in
process) bench=BenchmarkApplyPatchProcess ;;
inprocess) bench=BenchmarkApplyPatch ;;
*) echo "bench-patch: MODE must be process or inprocess" >&2; exit 2 ;;
esac

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$repo" && go test -c -o "$tmp/tools.test" ./tools/ && go build -o "$tmp/mini-agent" ./cmd/mini-agent)
if [ -n "$base" ]; then
	mkdir "$tmp/base"
	git -C "$repo" archive "$base" | tar -x -C "$tmp/base"
	(cd "$tmp/base" && go build -o "$tmp/base-mini-agent" ./cmd/mini-agent)
	[ "$mode" = process ] || { echo "bench-patch: BASE needs MODE=process" >&2; exit 2; }
fi

echo "$(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?');" \
	"$rounds rounds of $iters calls per tool and file; sizes: $sizes MB; mode: $mode"

for r in $(seq "$rounds"); do
	(cd "$repo/tools" && MINI_AGENT_BIN="$tmp/mini-agent" MINI_AGENT_PATCH_BENCH_MB="$sizes" "$tmp/tools.test" \
		-test.run '^$' -test.bench "^$bench\$" -test.benchtime "${iters}x") >"$tmp/round$r.txt"
	if [ -n "$base" ]; then
		(cd "$repo/tools" && MINI_AGENT_BIN="$tmp/base-mini-agent" MINI_AGENT_PATCH_BENCH_MB="$sizes" "$tmp/tools.test" \
			-test.run '^$' -test.bench "^$bench\$" -test.benchtime "${iters}x") >"$tmp/base$r.txt"
	fi
	echo "round $r/$rounds done" >&2
done

median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

# metric NAME UNIT [FILES]: the median over rounds of one metric of
# benchmark NAME (FILES: round, the default, or base).
metric() {
	cat "$tmp"/"${3:-round}"*.txt | awk -v n="$bench/$1" -v u="$2" '
		{ sub(/-[0-9]+$/, "", $1) }
		$1 == n { for (i = 2; i < NF; i++) if ($(i+1) == u) print $i }' | median
}

names=$(awk -v b="$bench/" 'index($1, b) == 1 {sub(/^[^\/]*\//, "", $1); sub(/-[0-9]+$/, "", $1); print $1}' "$tmp/round1.txt")
[ -n "$names" ] || { cat "$tmp/round1.txt"; echo "bench-patch: no results" >&2; exit 1; }

printf '\n%-9s %11s %10s %16s   %12s %11s %17s\n' file mini-cpu-ms git-cpu-ms "cpu ratio (<=2x)" mini-peak-MB git-peak-MB "rss/size (<=4x)"
worst_cpu=0
worst_rss=0
for n in $names; do
	cpu=$(metric "$n" cpu-ratio)
	rss=$(metric "$n" mini-rss/size)
	worst_cpu=$(awk -v a="$cpu" -v b="$worst_cpu" 'BEGIN {print (a > b) ? a : b}')
	worst_rss=$(awk -v a="$rss" -v b="$worst_rss" 'BEGIN {print (a > b) ? a : b}')
	printf '%-9s %11.1f %10.1f %15.2fx   %12.1f %11.1f %16.2fx\n' "$n" \
		"$(metric "$n" mini-cpu-ms)" "$(metric "$n" git-cpu-ms)" "$cpu" \
		"$(metric "$n" mini-peak-MB)" "$(metric "$n" git-peak-MB)" "$rss"
done
printf 'worst CPU ratio mini/git apply: %.2fx (target <= 2x); worst peak RSS / file size: %.2fx (target <= 4x)\n' "$worst_cpu" "$worst_rss"
if [ "$mode" = process ]; then
	printf '(process mode: rss/size is the peak above the same command on a one-line file, %s MB;' "$(metric "$(echo "$names" | head -1)" mini-base-peak-MB)"
	printf ' whole peak / file size:'
	for n in $names; do printf ' %s %.1fx' "$n" "$(metric "$n" mini-peak/size)"; done
	printf ')\n'
fi
if [ -n "$base" ]; then
	printf '\nbase %s, same rounds:\n' "$base"
	printf '%-9s %11s %10s %16s   %12s %17s\n' file base-cpu-ms git-cpu-ms "cpu ratio" base-peak-MB "rss/size"
	for n in $names; do
		printf '%-9s %11.1f %10.1f %15.2fx   %12.1f %16.2fx\n' "$n" \
			"$(metric "$n" mini-cpu-ms base)" "$(metric "$n" git-cpu-ms base)" "$(metric "$n" cpu-ratio base)" \
			"$(metric "$n" mini-peak-MB base)" "$(metric "$n" mini-rss/size base)"
	done
fi
