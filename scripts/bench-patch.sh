#!/usr/bin/env bash
# bench-patch.sh: times mini-agent's apply_patch tool against `git apply` on
# the same generated files and 3-hunk patches, in one run, and prints the
# ratios beside the targets.
#
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
# Usage: scripts/bench-patch.sh [ROUNDS [ITERS [SIZES_MB]]]   (defaults 5, 3, "1 4 8")
# Targets: mini-agent CPU <= 2x git apply's; peak RSS <= 4x the file size.
set -euo pipefail

rounds=${1:-5}
iters=${2:-3}
sizes=${3:-1 4 8}
repo=$(cd "$(dirname "$0")/.." && pwd)
command -v git >/dev/null || { echo "bench-patch: git missing" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench-patch: /usr/bin/time missing (apt-get install time)" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$repo" && go test -c -o "$tmp/tools.test" ./tools/)

echo "$(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?');" \
	"$rounds rounds of $iters calls per tool and file; sizes: $sizes MB"

for r in $(seq "$rounds"); do
	(cd "$repo/tools" && MINI_AGENT_PATCH_BENCH_MB="$sizes" "$tmp/tools.test" -test.run '^$' \
		-test.bench '^BenchmarkApplyPatch$' -test.benchtime "${iters}x") >"$tmp/round$r.txt"
	echo "round $r/$rounds done" >&2
done

median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

# metric NAME UNIT: the median over rounds of one metric of benchmark NAME.
metric() {
	cat "$tmp"/round*.txt | awk -v n="BenchmarkApplyPatch/$1" -v u="$2" '
		{ sub(/-[0-9]+$/, "", $1) }
		$1 == n { for (i = 2; i < NF; i++) if ($(i+1) == u) print $i }' | median
}

names=$(cat "$tmp/round1.txt" | awk '$1 ~ /^BenchmarkApplyPatch\// {sub(/^BenchmarkApplyPatch\//, "", $1); sub(/-[0-9]+$/, "", $1); print $1}')
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
