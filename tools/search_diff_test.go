package tools

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// diffTokens are the pieces generated lines and patterns are made of:
// identifiers, numbers, punctuation, letters that fold beyond ASCII (k, s),
// non-ASCII text, invalid UTF-8 and carriage returns.
var diffTokens = []string{
	"func", "Func", "FUNC", "err", "Err", "ErrUnexpectedEOF", "nil", "return", "x1", "abc123Def", "a9", "Z",
	"kelvin", "KELVIN", "\u212Aelvin", "straße", "STRASSE", "ſtraße", "Task", "task", "ask",
	"é", "É", "ÿ", "Ω", "ω", "日本", "\uFFFD", "\xff", "\xc3", "\xe2\x82", "\r", "\t", " ", "  ",
	"(", ")", "{", "}", "[", "]", "*", ".", "+", "?", "|", "\\", "^", "$", "_", "-", "=", ":=", "//",
	"0", "7", "42", "123", "0x1F", "foo", "bar", "Foo", "BAR", "fooBar", "foo_bar", "deadline exceeded",
	"Deadline Exceeded", "TODO", "todo", "fixme",
}

// diffCorpus generates n lines from diffTokens, deterministically.
func diffCorpus(r *rand.Rand, n int) []byte {
	var b bytes.Buffer
	for range n {
		switch r.IntN(20) {
		case 0: // empty line
		case 1: // a long line
			for range 40 + r.IntN(60) {
				b.WriteString(diffTokens[r.IntN(len(diffTokens))])
			}
		default:
			for range r.IntN(12) {
				b.WriteString(diffTokens[r.IntN(len(diffTokens))])
				if r.IntN(3) == 0 {
					b.WriteByte(' ')
				}
			}
		}
		b.WriteByte('\n')
	}
	if r.IntN(2) == 0 { // sometimes no final newline
		b.WriteString("tail foo 123Abc")
	}
	return b.Bytes()
}

// diffPatternAtoms are the pieces random patterns are built from.
var diffPatternAtoms = []string{
	"func", "err", "Err", "EOF", "foo", "bar", "kelvin", "straße", "task", "é", "Ω", "日本", "\uFFFD", "x", "a", "Z", "1", "42",
	"[a-z]", "[A-Z]", "[0-9]", "\\d", "\\w", "\\s", "\\S", ".", "[^a-z]", "[aeiou]", "[kK]", "[^\\n]", "[é-ÿ]",
	"\\(", "\\)", "\\.", "\\*", "_", " ", "\\t", "(?:foo|bar)", "(foo|Func)", "(?i:foo)", "(?i:k)",
	"\\b", "\\B", "^", "$", "\\A", "\\z", "\\n",
}

var diffPatternOps = []string{"", "", "", "+", "*", "?", "{2}", "{3}", "{1,3}", "{2,}", "+?"}

// diffPattern builds a random pattern; some are case-insensitive, some
// alternations.
func diffPattern(r *rand.Rand) string {
	part := func() string {
		var b strings.Builder
		for range 1 + r.IntN(5) {
			a := diffPatternAtoms[r.IntN(len(diffPatternAtoms))]
			op := diffPatternOps[r.IntN(len(diffPatternOps))]
			if op != "" && (strings.HasPrefix(a, "\\b") || strings.HasPrefix(a, "\\B") || a == "^" || a == "$" || a == "\\A" || a == "\\z") {
				op = "" // repeating an assertion is legal but pointless
			}
			if op != "" && len([]rune(a)) > 1 && !strings.HasPrefix(a, "[") && !strings.HasPrefix(a, "\\") && !strings.HasPrefix(a, "(") {
				a = "(?:" + a + ")"
			}
			b.WriteString(a + op)
		}
		return b.String()
	}
	p := part()
	if r.IntN(4) == 0 {
		p += "|" + part()
	}
	if r.IntN(4) == 0 {
		p = "(?i)" + p
	}
	return p
}

// diffQueries are hand-picked queries on top of the generated ones.
var diffQueries = []string{
	"ErrUnexpectedEOF", "(?i)errunexpectedeof", "(?i)deadline exceeded", "deadline exceeded|TODO",
	"[a-z]+[0-9]{3}[A-Z]", "[a-z][0-9]+", "\\d{2,}", "\\d+ms", "[A-Z][a-z]+[0-9]", "0x[0-9A-F]+", "[0-9]{3}",
	"(?i)[a-z]{2}[0-9]", "(?i)kelvin", "(?i)k", "(?i)task", "(?i)STRASSE|straße", "\uFFFD", "a\uFFFDb", "(?i)\uFFFD",
	"^func", "^$", "^\\s*$", "\\bfoo\\b", "foo$", "\\Afoo", "bar\\z", "(foo|bar)+[0-9]", "x{3}", "[xy]{2}[0-9]",
	"é", "(?i)É", "Ω|ω", "(?i)ω", "[^ -~]", "[\\x00-\\x08]", "\\p{Greek}", "\\p{Lu}[0-9]", "日本", "[日本]+",
	"(?s)foo.bar", "foo.bar", "foo\\nbar", "\\n", "(a|b)(c|d)[0-9]", "(ab|cd)[0-9]|[0-9](ef|gh)", "(?i)(ab|cd)9",
	"[0-9]{70}x", "x[0-9]{70}", "(ab[0-9]){30}Z", "Z(ab[0-9]){30}", "(ab[0-9]){25,}Z", "[a-c]{65}[0-9]", "[0-9][a-c]{65}",
	"(?:[0-9]{3}[a-z]){20}!", "!(?:[0-9]{3}[a-z]){20}", "(?:ab[0-9]|cd[0-9]){30}Z", "q[0-9]{100}",
	`[a-z]+_[a-z]+_[a-z]+\(`, `[a-z]_[a-z]_[a-z]\(`, `[a-z]+_[a-z]*_[a-z]?\(`, `(foo|bar)_[0-9]+x{2,}[A-Z]`, `a.b.c`,
	`(a|bc)x(d|ef)y`, `[a-z]{3}_?[a-z]{3}\(`, `\w+_\w+\(\)`, `(?i)[a-z]+_k[a-z]+\(`, `x\d*_\d+y`, `é_[a-z]+_é`,
	"[[:digit:]][[:upper:]]", "[[:alpha:]]{3}[[:digit:]]", "\\w+\\(\\)", "\\(\\)", "(?U)f.*o", "\\t\\r", "\\r$",
}

// TestMatcherDifferential checks the fast scan against the obvious loop
// (the regexp on every line) over a generated corpus and this package's
// own files, for hand-picked and generated queries.
func TestMatcherDifferential(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	r := rand.New(rand.NewPCG(15, 2026))
	corpora := map[string][]byte{"generated": diffCorpus(r, 1500), "generated-small": diffCorpus(r, 40),
		"long runs": longRunCorpus()}
	real, err := filepath.Glob("search_[mcn]*.go") // search_match, search_classes, search_needle...
	if err != nil || len(real) == 0 {
		t.Fatalf("no real files: %v", err)
	}
	for _, f := range real {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		corpora[f] = data
	}
	queries := slices.Clone(diffQueries)
	for range 400 {
		queries = append(queries, diffPattern(r))
	}
	checked := 0
	for _, q := range queries {
		re, err := regexp.Compile(q)
		if err != nil {
			continue // a generated pattern RE2 refuses
		}
		m, err := newMatcher(q)
		if err != nil {
			t.Fatalf("newMatcher(%q): %v (regexp accepts it)", q, err)
		}
		for name, data := range corpora {
			want := matchingLines(re, data)
			got, count := scanLines(m, data)
			if !slices.Equal(got, want) || count != len(want) {
				t.Errorf("query %q on %s (lits %v, %d needles, pure %v): got lines %v (count %d), want %v",
					q, name, m.lits, len(m.needles), m.pure, got, count, want)
			}
		}
		checked++
	}
	if checked < len(diffQueries)+300 {
		t.Fatalf("only %d queries compiled", checked)
	}
}

// matchingLines is the reference: line numbers whose text (without its
// newline) the regexp matches.
func matchingLines(re *regexp.Regexp, data []byte) []int {
	var out []int
	lines := bytes.Split(data, []byte{'\n'})
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1] // the final newline ends the last line
	}
	for i, l := range lines {
		if re.Match(l) {
			out = append(out, i+1)
		}
	}
	return out
}

func scanLines(m *matcher, data []byte) ([]int, int) {
	res := searchBuffer(m, data, 1<<30)
	var out []int
	for _, h := range res.hits {
		out = append(out, h.line)
	}
	return out, res.count
}

// TestMatcherUsesPrefilters checks the queries the benchmark names get the
// scan they are meant to: a literal-free query a class run anchored on its
// rarest class, a case-insensitive literal an anchor on its rarest letter.
func TestMatcherUsesPrefilters(t *testing.T) {
	t.Parallel()
	cases := []struct {
		query  string
		anchor byte // a byte the anchor class holds
		n      int  // window length
	}{
		{"[a-z]+[0-9]{3}[A-Z]", '5', 5},    // [a-z][0-9][0-9][0-9][A-Z]; digits are rarer than letters
		{"(?i)deadline exceeded", 'x', 17}, // not the common first letter d
		{"ErrUnexpectedEOF", 'U', 16},      // U is rarer than E
		{"(?i)zeta[0-9]{4}", 'Z', 8},       // the class run beats the literal; z is its rarest
		{`func \w+Handler\(`, 'H', 8},      // the literal "Handler("
		{"0x[0-9A-F]+ms", 'x', 3},          // the run "0x[0-9A-F]" beats the literal "0x"
		{"(?i)[a-z]{2}\\d{3}", '3', 3},     // (?i)[a-z] also matches U+212A and U+017F: only the digits
		{`\d\d:\d\d`, ':', 5},
	}
	for _, c := range cases {
		m, err := newMatcher(c.query)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.needles) != 1 {
			t.Errorf("%q: %d needles, want 1", c.query, len(m.needles))
			continue
		}
		nd := m.needles[0]
		var anchor byteSet
		if nd.lit != nil {
			anchor.add(nd.lit[nd.anchor])
			if nd.fold {
				anchor.add(bytes.ToUpper(nd.lit[nd.anchor : nd.anchor+1])[0])
			}
		} else {
			anchor = nd.classes[nd.anchor]
		}
		if !anchor.has(c.anchor) || nd.n != c.n {
			t.Errorf("%q: window %d bytes anchored on %q, want %d bytes anchored on a class holding %q",
				c.query, nd.n, anchor.bytesOf(), c.n, c.anchor)
		}
	}
}

// TestClassScan compares the class scanner (few bytes, SWAR ranges, byte
// by byte) with a plain loop, for sets of every kind at every alignment.
func TestClassScan(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 300)
	for i := range buf {
		buf[i] = byte(r.IntN(256))
	}
	sets := map[string]func(*byteSet){
		"digits":    func(s *byteSet) { s.addRange('0', '9') },
		"word":      func(s *byteSet) { s.addRange('a', 'z'); s.addRange('A', 'Z'); s.addRange('0', '9'); s.add('_') },
		"fold x":    func(s *byteSet) { s.add('x'); s.add('X') },
		"one":       func(s *byteSet) { s.add('q') },
		"edges":     func(s *byteSet) { s.add(0); s.add(0x7f); s.add('A'); s.add('z') },
		"low":       func(s *byteSet) { s.addRange(0, 31) },
		"top":       func(s *byteSet) { s.addRange(0x70, 0x7f) },
		"non-ascii": func(s *byteSet) { s.addRange(0x80, 0xff); s.add('a') },
		"many runs": func(s *byteSet) {
			for c := byte('a'); c <= 'z'; c += 2 {
				s.add(c)
			}
		},
	}
	for name, fill := range sets {
		var s byteSet
		fill(&s)
		cs := newClassScan(&s)
		for from := 0; from <= len(buf); from++ {
			want := -1
			for i := from; i < len(buf); i++ {
				if s.has(buf[i]) {
					want = i
					break
				}
			}
			var got int
			if cs.few != nil {
				nd := needle{n: 1, classes: []byteSet{s}, scan: cs}
				f := newNeedleFinder(buf, &nd)
				got = f.index(from)
			} else {
				got = cs.next(buf, from)
			}
			if got != want {
				t.Fatalf("%s: from %d: got %d, want %d", name, from, got, want)
			}
		}
	}
}

// TestNeedleNearMisses: text made of a literal's own bytes makes every
// anchor hit a near miss, each costing a long compare; the finder must
// then switch to bytes.Index (linear) and still find every occurrence.
func TestNeedleNearMisses(t *testing.T) {
	t.Parallel()
	lit := []byte(strings.Repeat("a", 3000))
	text := strings.Repeat(strings.Repeat("a", 2999)+"\n", 300) + string(lit) + "\n" + strings.Repeat("a", 2999) + "\n" + string(lit) + "a\n"
	nd := newLitNeedle(lit, false)
	f := newNeedleFinder([]byte(text), &nd)
	var starts []int
	for from := 0; ; {
		i := f.index(from)
		if i < 0 {
			break
		}
		starts = append(starts, i)
		from = i + 1
	}
	first := 300 * 3000
	want := []int{first, first + 3001 + 3000, first + 3001 + 3000 + 1}
	if !slices.Equal(starts, want) {
		t.Fatalf("starts %v, want %v", starts, want)
	}
	if !f.plain {
		t.Error("near misses did not switch the finder to bytes.Index")
	}
	// A literal whose anchor hits mostly match, or are rare, keeps the
	// anchor scan.
	nd = newLitNeedle([]byte("ErrUnexpectedEOF"), false)
	f = newNeedleFinder([]byte(strings.Repeat("ErrUnexpectedEOF Unexpected\n", 500)), &nd)
	n := 0
	for from := 0; ; n++ {
		i := f.index(from)
		if i < 0 {
			break
		}
		from = i + 1
	}
	if n != 500 || f.plain {
		t.Errorf("%d matches, plain %v; want 500 and the anchor scan", n, f.plain)
	}
}

// longRunCorpus holds lines with long runs of classes, near and exact
// misses of the long-run queries, where a run cut in the wrong place would
// lose a match.
func longRunCorpus() []byte {
	var b strings.Builder
	digits := func(n int) string { return strings.Repeat("7", n) }
	ab := func(n int) string {
		var s strings.Builder
		for i := range n {
			fmt.Fprintf(&s, "ab%d", i%10)
		}
		return s.String()
	}
	abc := func(n int) string { return strings.Repeat("abc", n/3+1)[:n] }
	three := func(n int) string { return strings.Repeat("123q", n) }
	for _, l := range []string{
		digits(70) + "x", digits(69) + "x", "x" + digits(70), "x" + digits(69), "y" + digits(75) + "x",
		ab(30) + "Z", ab(29) + "Z", "Z" + ab(30), "Z" + ab(29), ab(26) + "Z", ab(24) + "Z", "Z" + ab(31) + "Z",
		abc(65) + "5", abc(64) + "5", "5" + abc(65), "5" + abc(64), abc(130) + "0",
		three(20) + "!", three(19) + "!", "!" + three(20), "!" + three(19), "!" + three(21) + "!",
		strings.ReplaceAll(ab(30), "ab3", "cd3") + "Z", "q" + digits(100), "q" + digits(99),
	} {
		b.WriteString(l + "\n")
	}
	return []byte(b.String())
}

// FuzzSearchMatcher compares the fast scan with the per-line regexp for
// any pattern RE2 accepts and any text.
func FuzzSearchMatcher(f *testing.F) {
	for _, q := range diffQueries[:20] {
		f.Add(q, "foo bar\nErrUnexpectedEOF\nabc123Def\n\xff\uFFFD straße KELVIN \u212Aelvin\nx 0x1F deadline EXCEEDED\n")
	}
	f.Add("(?i)k[a-z]{2}\\d", "\u212Aab1\nkab1\nKAB1\n")
	f.Add("[0-9]{3}[A-Z]|x", "12A\n123A\nx")
	f.Fuzz(func(t *testing.T, q, text string) {
		if len(q) > 200 || len(text) > 4096 {
			return
		}
		re, err := regexp.Compile(q)
		if err != nil {
			return
		}
		m, err := newMatcher(q)
		if err != nil {
			t.Fatalf("newMatcher(%q): %v (regexp accepts it)", q, err)
		}
		want := matchingLines(re, []byte(text))
		got, count := scanLines(m, []byte(text))
		if !slices.Equal(got, want) || count != len(want) {
			t.Fatalf("query %q on %q: got %v (count %d), want %v", q, text, got, count, want)
		}
	})
}

// TestSequenceFilter checks the literal-free query gets an ordered
// run filter that rejects the near misses the regexp used to run on, and
// that the filter never rejects a line the regexp matches (generated
// corpus, every query of the differential test).
func TestSequenceFilter(t *testing.T) {
	t.Parallel()
	m, err := newMatcher(`[a-z]+_[a-z]+_[a-z]+\(`)
	if err != nil {
		t.Fatal(err)
	}
	var gaps []int
	for _, st := range m.seq {
		gaps = append(gaps, st.gap)
	}
	// [a-z], [a-z]_[a-z] (0 on), [a-z]_[a-z] (2 on), [a-z]( (2 on).
	if !slices.Equal(gaps, []int{0, 2, 2, 0}) {
		t.Fatalf("sequence gaps %v, want [0 2 2 0]", gaps)
	}
	// What the filter says (a_b c_d( passes it and fails the regexp: the
	// filter only has to be cheap and never wrong the other way).
	for line, want := range map[string]bool{
		"x := foo_bar(y)": false, "a_b_c(": true, "ab_cd_ef(1)": true, "a_b c_d(": true, "a_b_(c": false,
		"foo_bar_baz": false, "(a_b_c": false, "a_b_c (": false,
	} {
		if got := m.seq.pass([]byte(line)); got != want {
			t.Errorf("pass(%q) = %v, want %v", line, got, want)
		}
	}
	r := rand.New(rand.NewPCG(5, 8))
	corpus := bytes.Split(diffCorpus(r, 3000), []byte{'\n'})
	queries := slices.Clone(diffQueries)
	for range 300 {
		queries = append(queries, diffPattern(r))
	}
	withSeq := 0
	for _, q := range queries {
		m, err := newMatcher(q)
		if err != nil || m.seq == nil {
			continue
		}
		withSeq++
		for _, line := range corpus {
			if m.line.Match(line) && !m.seq.pass(line) {
				t.Fatalf("query %q: the sequence filter rejects %q, which matches", q, line)
			}
		}
	}
	if withSeq < 50 {
		t.Errorf("only %d queries got a sequence filter", withSeq)
	}
}
