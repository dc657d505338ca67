#!/usr/bin/env bash
# bench-search.sh: times mini-agent's search tool against `git grep -n -E`
# (and ripgrep when installed) on the same tree, for the same queries, in
# one run, and prints the ratios.
#
# The tree is a copy of $(go env GOROOT)/src made into a git work tree
# (`git init && git add -A`), so git grep and mini-agent (which lists files
# with `git ls-files`) search exactly the same files. The queries come from
# tools/testdata/search_bench/queries.tsv, shared with BenchmarkSearch; the
# first three (literal, simple regex, no match) are the target set, the
# others extra figures.
#
# mini-agent is timed by BenchmarkSearch (the whole tool call: listing,
# reading, matching, rendering; ns/op over ITERS calls). Rounds interleave
# the tools query by query, so that load from other processes hits them
# alike; the figures are medians over the rounds, and the ratio is the
# median of the per-round ratios.
#
# Usage: scripts/bench-search.sh [ROUNDS [ITERS]]   (defaults 5 and 3)
# Target: mini-agent no slower than 1.5x git grep on the target set.
set -euo pipefail

rounds=${1:-5}
iters=${2:-3}
repo=$(cd "$(dirname "$0")/.." && pwd)
queries="$repo/tools/testdata/search_bench/queries.tsv"
src="$(go env GOROOT)/src"
[ -d "$src" ] || { echo "bench-search: $src missing" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tree="$tmp/src"
cp -R "$src" "$tree"
(cd "$tree" && git init -q && git add -A)
(cd "$repo" && go test -c -o "$tmp/tools.test" ./tools/)
export LC_ALL=C # the same byte semantics for [a-z] in git grep and RE2
have_rg=false
command -v rg >/dev/null && have_rg=true

echo "tree: copy of $src, $(git -C "$tree" ls-files | wc -l) files, $(du -sh "$tree" | cut -f1);" \
	"$(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?');" \
	"$rounds rounds of $iters calls per tool and query"

names=()
qs=()
while IFS=$'\t' read -r name query; do
	case "$name" in '' | '#'*) continue ;; esac
	names+=("$name")
	qs+=("$query")
done <"$queries"

# avg_ms ITERS CMD...: mean wall time of CMD over ITERS runs, in ms.
avg_ms() {
	local n=$1 s e
	shift
	s=$(date +%s%N)
	for _ in $(seq "$n"); do "$@" >/dev/null 2>&1 || true; done
	e=$(date +%s%N)
	awk -v t=$((e - s)) -v n="$n" 'BEGIN {printf "%.1f", t / n / 1e6}'
}

# mini_ms NAME: BenchmarkSearch's ms/op for one query (output kept in
# $tmp/NAME.bench for the line count).
mini_ms() {
	(cd "$repo/tools" && MINI_AGENT_BENCH_DIR="$tree" "$tmp/tools.test" -test.run '^$' \
		-test.bench "^BenchmarkSearch\$/^$1\$" -test.benchtime "${iters}x") >"$tmp/$1.bench"
	awk '$1 ~ /^BenchmarkSearch\// {printf "%.1f", $3 / 1e6}' "$tmp/$1.bench"
}
mini_lines() {
	awk '$1 ~ /^BenchmarkSearch\// {for (i = 1; i < NF; i++) if ($(i+1) == "lines") printf "%d", $i}' "$tmp/$1.bench"
}

median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

declare -A mini git rg rgit rrg
for i in "${!names[@]}"; do # warm the page cache and check the queries
	(cd "$tree" && git grep -n -E -e "${qs[$i]}" >/dev/null) || true
done
for r in $(seq "$rounds"); do
	for i in "${!names[@]}"; do
		n=${names[$i]}
		m=$(mini_ms "$n")
		g=$(cd "$tree" && avg_ms "$iters" git grep -n -E -e "${qs[$i]}")
		mini[$n]+="$m "
		git[$n]+="$g "
		rgit[$n]+="$(awk -v a="$m" -v b="$g" 'BEGIN {print a / b}') "
		if $have_rg; then
			x=$(cd "$tree" && avg_ms "$iters" rg -n --no-heading -e "${qs[$i]}")
			rg[$n]+="$x "
			rrg[$n]+="$(awk -v a="$m" -v b="$x" 'BEGIN {print a / b}') "
		fi
	done
	echo "round $r/$rounds done" >&2
done

med() { tr ' ' '\n' <<<"$1" | grep . | median; }
printf '\n%-12s %9s %9s %7s' query mini-ms git-ms ratio
$have_rg && printf ' %9s %7s' rg-ms ratio
printf '  %s\n' "matching lines mini / git grep"
worst=0
for i in "${!names[@]}"; do
	n=${names[$i]}
	ratio=$(med "${rgit[$n]}")
	extra=""
	if [ "$i" -lt 3 ]; then
		worst=$(awk -v a="$ratio" -v b="$worst" 'BEGIN {print (a > b) ? a : b}')
	else
		extra=" (extra)"
	fi
	printf '%-12s %9.1f %9.1f %6.2fx' "$n" "$(med "${mini[$n]}")" "$(med "${git[$n]}")" "$ratio"
	$have_rg && printf ' %9.1f %6.2fx' "$(med "${rg[$n]}")" "$(med "${rrg[$n]}")"
	glines=$(cd "$tree" && { git grep -n -E -e "${qs[$i]}" || true; } | wc -l)
	printf '  %s / %s%s\n' "$(mini_lines "$n")" "$glines" "$extra"
done
$have_rg || echo "(rg not installed: skipped)"
printf 'worst ratio mini/git grep over the target set: %.2fx (target <= 1.5x)\n' "$worst"
echo "note: git grep also reports matches in binary files and files over 1 MiB, which search skips"
