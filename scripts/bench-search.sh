#!/usr/bin/env bash
# bench-search.sh: times mini-agent's search tool against `git grep -n -E`
# (and ripgrep when installed) on the same tree, for the same queries, in
# one run, and prints the ratios.
#
# The tree is a copy of $(go env GOROOT)/src made into a git work tree
# (`git init && git add -A`), so git grep and mini-agent (which lists files
# with `git ls-files`) search exactly the same files. The queries come from
# tools/testdata/search_bench/queries.tsv, shared with BenchmarkSearch.
#
# Usage: scripts/bench-search.sh [RUNS]   (RUNS per tool and query, default 7)
# Figures are medians. Target: mini-agent no slower than 1.5x git grep.
set -euo pipefail

runs=${1:-7}
repo=$(cd "$(dirname "$0")/.." && pwd)
queries="$repo/tools/testdata/search_bench/queries.tsv"
src="$(go env GOROOT)/src"
[ -d "$src" ] || { echo "bench-search: $src missing" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tree="$tmp/src"
cp -R "$src" "$tree"
(cd "$tree" && git init -q && git add -A)
export LC_ALL=C # the same byte semantics for [a-z] in git grep and RE2
nfiles=$(git -C "$tree" ls-files | wc -l)
echo "tree: copy of $src, $nfiles files, $(du -sh "$tree" | cut -f1); $(nproc) CPUs; $runs runs per figure (median)"

# median of the numbers on stdin
median() { sort -n | awk '{a[NR]=$1} END {if (NR==0) print "nan"; else if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

# time_ms CMD...: median wall time of CMD in milliseconds, output discarded.
time_ms() {
	"$@" >/dev/null 2>&1 || true # warm-up (and page cache)
	for _ in $(seq "$runs"); do
		local s e
		s=$(date +%s%N)
		"$@" >/dev/null 2>&1 || true
		e=$(date +%s%N)
		echo $(((e - s) / 1000))
	done | median | awk '{printf "%.1f", $1/1000}'
}

# mini-agent: BenchmarkSearch on the same tree; ns/op medians per query.
bench="$tmp/bench.txt"
(cd "$repo" && MINI_AGENT_BENCH_DIR="$tree" go test ./tools/ -run '^$' -bench '^BenchmarkSearch$' \
	-benchtime 1x -count "$runs" >"$bench")
declare -A mini lines
while IFS=$'\t' read -r name query; do
	case "$name" in '' | '#'*) continue ;; esac
	mini[$name]=$(awk -v n="BenchmarkSearch/$name" '$1 ~ "^"n"(-[0-9]+)?$" {print $3}' "$bench" | median | awk '{printf "%.1f", $1/1e6}')
	lines[$name]=$(awk -v n="BenchmarkSearch/$name" '$1 ~ "^"n"(-[0-9]+)?$" {for (i=1;i<NF;i++) if ($(i+1)=="lines") print $i}' "$bench" | head -1)
done <"$queries"

have_rg=false
command -v rg >/dev/null && have_rg=true

printf '\n%-8s %10s %10s %7s' query mini-ms git-ms ratio
$have_rg && printf ' %10s %7s' rg-ms ratio
printf '  %s\n' "matching lines (mini / git grep)"
worst=0
while IFS=$'\t' read -r name query; do
	case "$name" in '' | '#'*) continue ;; esac
	g=$(cd "$tree" && time_ms git grep -n -E -e "$query")
	glines=$(cd "$tree" && { git grep -n -E -e "$query" || true; } | wc -l)
	m=${mini[$name]}
	ratio=$(awk -v a="$m" -v b="$g" 'BEGIN {printf "%.2f", a/b}')
	worst=$(awk -v a="$ratio" -v b="$worst" 'BEGIN {print (a > b) ? a : b}')
	printf '%-8s %10s %10s %6sx' "$name" "$m" "$g" "$ratio"
	if $have_rg; then
		r=$(cd "$tree" && time_ms rg -n --no-heading -e "$query")
		printf ' %10s %6sx' "$r" "$(awk -v a="$m" -v b="$r" 'BEGIN {printf "%.2f", a/b}')"
	fi
	printf '  %s / %s\n' "${lines[$name]:-?}" "$glines"
done <"$queries"
$have_rg || echo "(rg not installed: skipped)"
echo "worst ratio mini/git grep: ${worst}x (target <= 1.5x)"
echo "note: git grep also reports matches in binary files and files over 1 MiB, which search skips"
