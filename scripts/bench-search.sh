#!/usr/bin/env bash
# bench-search.sh: times mini-agent's search tool against ripgrep and
# `git grep -n -E` on the same tree, for the same queries, in one run, and
# prints the ratios beside the targets.
#
# The tree is a copy of $(go env GOROOT)/src made into a git work tree
# (`git init && git add -A`), so git grep and mini-agent (which lists files
# with `git ls-files`) search exactly the same files; rg applies its own
# rules (it also skips hidden files). The queries come from
# tools/testdata/search_bench/queries.tsv, shared with BenchmarkSearch: one
# per class (literal, simple regex, alternation, no literal,
# case-insensitive, no match). A leading (?i) becomes git grep's -i.
#
# mini-agent is timed by BenchmarkSearch (the whole tool call: listing,
# reading, matching, rendering; ns/op and cpu-ns/op over ITERS calls, the
# file list cached as within a run; "literal-cold" drops the cache before
# each call). git grep and rg are timed by bash's `time` over ITERS runs:
# wall, and CPU = user + sys. Rounds interleave the three tools query by
# query, so that load from other processes hits them alike; figures are
# medians over the rounds, and each ratio is the median of the per-round
# ratios.
#
# ripgrep is installed from Debian's packages when missing; it is only a
# reference here, never a dependency of mini-agent.
#
# Usage: scripts/bench-search.sh [ROUNDS [ITERS]]   (defaults 5 and 3)
# Targets: CPU and wall <= 2x rg on every query; <= 1.2x git grep on literal.
set -euo pipefail

rounds=${1:-5}
iters=${2:-3}
repo=$(cd "$(dirname "$0")/.." && pwd)
queries="$repo/tools/testdata/search_bench/queries.tsv"
src="$(go env GOROOT)/src"
[ -d "$src" ] || { echo "bench-search: $src missing" >&2; exit 2; }

if ! command -v rg >/dev/null; then
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	echo "bench-search: installing ripgrep (Debian package)" >&2
	$sudo apt-get update -qq && $sudo apt-get install -y -qq ripgrep >/dev/null
fi
command -v rg >/dev/null || { echo "bench-search: rg missing and could not be installed" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tree="$tmp/src"
cp -R "$src" "$tree"
(cd "$tree" && git init -q && git add -A)
(cd "$repo" && go test -c -o "$tmp/tools.test" ./tools/)
export LC_ALL=C # the same byte semantics for [a-z] in git grep and RE2

echo "tree: copy of $src, $(git -C "$tree" ls-files | wc -l) files, $(du -sh "$tree" | cut -f1);" \
	"$(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?');" \
	"$rounds rounds of $iters calls per tool and query; $(rg --version | sed -n 1p), $(git --version)"

names=()
qs=()
while IFS=$'\t' read -r name query; do
	case "$name" in '' | '#'*) continue ;; esac
	names+=("$name")
	qs+=("$query")
done <"$queries"
# The cold-cache variant BenchmarkSearch adds for the first query.
names+=("${names[0]}-cold")
qs+=("${qs[0]}")

# timed ITERS CMD...: "wall cpu" of CMD, mean ms per run over ITERS runs.
timed() {
	local n=$1 out
	shift
	out=$( { TIMEFORMAT='%R %U %S'; time (for _ in $(seq "$n"); do "$@" >/dev/null 2>&1 || true; done); } 2>&1)
	awk -v n="$n" '{printf "%.2f %.2f", $1 * 1000 / n, ($2 + $3) * 1000 / n}' <<<"$out"
}

# grep_args QUERY: git grep's pattern flags for QUERY.
grep_args() {
	case "$1" in
	'(?i)'*) printf '%s\n' -i -E -e "${1#'(?i)'}" ;;
	*) printf '%s\n' -E -e "$1" ;;
	esac
}

# mini NAME: "wall cpu" ms per call from BenchmarkSearch (output kept in
# $tmp/NAME.bench for the line count).
mini() {
	(cd "$repo/tools" && MINI_AGENT_BENCH_DIR="$tree" "$tmp/tools.test" -test.run '^$' \
		-test.bench "^BenchmarkSearch\$/^$1\$" -test.benchtime "${iters}x") >"$tmp/$1.bench"
	awk '$1 ~ /^BenchmarkSearch\// {
		for (i = 2; i < NF; i++) { if ($(i+1) == "ns/op") w = $i; if ($(i+1) == "cpu-ns/op") c = $i }
		printf "%.2f %.2f", w / 1e6, c / 1e6 }' "$tmp/$1.bench"
}
mini_lines() {
	awk '$1 ~ /^BenchmarkSearch\// {for (i = 1; i < NF; i++) if ($(i+1) == "lines") printf "%d", $i}' "$tmp/$1.bench"
}

median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
med() { tr ' ' '\n' <<<"$1" | grep . | median; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {print (b > 0) ? a / b : 0}'; }

# Per query: wall and CPU of each tool, and the per-round ratios.
declare -A mw mc gw gc rw rc rgw rgc rrw rrc
for i in "${!names[@]}"; do # warm the page cache and check the queries
	mapfile -t ga < <(grep_args "${qs[$i]}")
	(cd "$tree" && git grep -n "${ga[@]}" >/dev/null && rg -n --no-heading -e "${qs[$i]}" >/dev/null) || true
done
for r in $(seq "$rounds"); do
	for i in "${!names[@]}"; do
		n=${names[$i]}
		mapfile -t ga < <(grep_args "${qs[$i]}")
		read -r a b <<<"$(mini "$n")"
		read -r c d <<<"$(cd "$tree" && timed "$iters" git grep -n "${ga[@]}")"
		read -r e f <<<"$(cd "$tree" && timed "$iters" rg -n --no-heading -e "${qs[$i]}")"
		mw[$n]+="$a " mc[$n]+="$b " gw[$n]+="$c " gc[$n]+="$d " rw[$n]+="$e " rc[$n]+="$f "
		rgw[$n]+="$(ratio "$a" "$c") " rgc[$n]+="$(ratio "$b" "$d") "
		rrw[$n]+="$(ratio "$a" "$e") " rrc[$n]+="$(ratio "$b" "$f") "
	done
	echo "round $r/$rounds done" >&2
done

printf '\n%-16s | %17s | %17s | %17s | %-25s | %-25s | %s\n' "" "mini ms" "git grep ms" "rg ms" "mini/rg (<= 2x)" "mini/git grep" "lines"
printf '%-16s | %8s %8s | %8s %8s | %8s %8s | %-12s %-12s | %-12s %-12s | %s\n' \
	query wall cpu wall cpu wall cpu wall cpu wall cpu "mini / git grep / rg"
fails=0
verdict() { # verdict RATIO LIMIT
	if awk -v a="$1" -v b="$2" 'BEGIN {exit !(a <= b)}'; then
		printf '%5.2fx ok   ' "$1"
	else
		printf '%5.2fx OVER ' "$1"
		fails=$((fails + 1))
	fi
}
for i in "${!names[@]}"; do
	n=${names[$i]}
	mapfile -t ga < <(grep_args "${qs[$i]}")
	printf '%-16s | %8.1f %8.1f | %8.1f %8.1f | %8.1f %8.1f | ' "$n" \
		"$(med "${mw[$n]}")" "$(med "${mc[$n]}")" "$(med "${gw[$n]}")" "$(med "${gc[$n]}")" "$(med "${rw[$n]}")" "$(med "${rc[$n]}")"
	if [[ $n == *-cold ]]; then # the first call of a run: shown, not a target
		printf '%5.2fx       %5.2fx       | %5.2fx       %5.2fx       ' \
			"$(med "${rrw[$n]}")" "$(med "${rrc[$n]}")" "$(med "${rgw[$n]}")" "$(med "${rgc[$n]}")"
	else
		verdict "$(med "${rrw[$n]}")" 2
		verdict "$(med "${rrc[$n]}")" 2
		printf '| '
		if [ "$n" = literal ]; then
			verdict "$(med "${rgw[$n]}")" 1.2
			verdict "$(med "${rgc[$n]}")" 1.2
		else
			printf '%5.2fx       %5.2fx       ' "$(med "${rgw[$n]}")" "$(med "${rgc[$n]}")"
		fi
	fi
	glines=$(cd "$tree" && { git grep -n "${ga[@]}" || true; } | wc -l)
	rlines=$(cd "$tree" && { rg -n --no-heading -e "${qs[$i]}" || true; } | wc -l)
	printf '| %s / %s / %s\n' "$(mini_lines "$n")" "$glines" "$rlines"
done
echo
echo "targets: mini/rg <= 2x (wall and CPU) on every query class; mini/git grep <= 1.2x on literal."
echo "literal-cold drops the cached file list before each call (the first search of a run): shown, not a target."
echo "notes: git grep and rg also search files over 1 MiB, which search skips; rg skips hidden files."
echo "targets missed: $fails"
