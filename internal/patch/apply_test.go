package patch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

// apply1 patches one file "f" in memory.
func apply1(content, text string) (string, error) {
	p, err := Parse(text)
	if err != nil {
		return "", err
	}
	res, err := Apply(fstest.MapFS{"f": {Data: []byte(content), Mode: 0o644}}, p)
	if err != nil {
		return "", err
	}
	return string(res.Files[0].New), nil
}

func TestApplyRules(t *testing.T) {
	t.Parallel()
	py := "class A:\n    def f(self):\n        return 1\n\nclass B:\n    def f(self):\n        return 1\n"
	twin := "x\nblock\nend\ny\nblock\nend\n"
	tests := []struct {
		name, content, patch, want, err string
	}{
		{
			name:    "nested hints pick class B",
			content: py,
			patch:   "*** Update File: f\n@@ class B:\n@@     def f(self):\n-        return 1\n+        return 2\n*** End Patch\n",
			want:    py[:len(py)-len("        return 1\n")] + "        return 2\n",
		},
		{
			name:    "nested hints pick class A",
			content: py,
			patch:   "*** Update File: f\n@@ class A:\n@@     def f(self):\n-        return 1\n+        return 2\n*** End Patch\n",
			want:    strings.Replace(py, "return 1", "return 2", 1),
		},
		{
			name:    "hint naming nothing leaves it ambiguous",
			content: py,
			patch:   "*** Update File: f\n@@ class C:\n-        return 1\n+        return 2\n*** End Patch\n",
			err:     "at 2 places, starting at lines 3, 7",
		},
		{
			name:    "both twins after the previous hunk: ambiguous",
			content: twin,
			patch:   "--- a/f\n+++ b/f\n@@\n-x\n+X\n@@\n block\n-end\n+END\n",
			err:     "hunk 2 of 2 matches the file (exactly) at 2 places, starting at lines 2, 5",
		},
		{
			name:    "previous hunk in the middle: only the later twin qualifies",
			content: twin,
			patch:   "--- a/f\n+++ b/f\n@@\n-y\n+Y\n@@\n block\n-end\n+END\n",
			want:    "x\nblock\nend\nY\nblock\nEND\n",
		},
		{
			name:    "exact match wins over an indentation-only twin",
			content: "if a {\n\tb()\n}\nif a {\n    b()\n}\n",
			patch:   "--- a/f\n+++ b/f\n@@\n-    b()\n+    c()\n",
			want:    "if a {\n\tb()\n}\nif a {\n    c()\n}\n",
		},
		{
			name:    "two-space patch for tab file",
			content: "func f() {\n\tif x {\n\t\ty()\n\t}\n}\n",
			patch:   "--- a/f\n+++ b/f\n@@\n   if x {\n-    y()\n+    z()\n+    w()\n   }\n",
			want:    "func f() {\n\tif x {\n\t\tz()\n\t\tw()\n\t}\n}\n",
		},
		{
			name:    "patch with extra indentation",
			content: "a:\n  b: 1\n  c: 2\n",
			patch:   "--- a/f\n+++ b/f\n@@\n     b: 1\n-    c: 2\n+    c: 3\n",
			want:    "a:\n  b: 1\n  c: 3\n",
		},
		{
			name:    "mixed line endings: new lines follow the majority",
			content: "a\r\nb\r\nc\n",
			patch:   "--- a/f\n+++ b/f\n@@\n a\n+a2\n b\n",
			want:    "a\r\na2\r\nb\r\nc\n",
		},
		{
			name:    "out-of-order hunks that overlap are refused",
			content: "1\n2\n3\n4\n5\n6\n",
			patch:   "--- a/f\n+++ b/f\n@@\n 4\n-5\n+five\n@@\n 3\n-4\n+four\n",
			err:     "overlap",
		},
		{
			name:    "adding to an empty file",
			content: "",
			patch:   "--- a/f\n+++ b/f\n@@ -0,0 +1,2 @@\n+one\n+two\n",
			want:    "one\ntwo\n",
		},
		{
			name:    "emptying a file",
			content: "one\ntwo\n",
			patch:   "--- a/f\n+++ b/f\n@@\n-one\n-two\n",
			want:    "",
		},
		{
			name:    "end of file anchor with only additions",
			content: "a\nb\n",
			patch:   "*** Update File: f\n@@\n+c\n*** End of File\n*** End Patch\n",
			want:    "a\nb\nc\n",
		},
		{
			name:    "stale removed line shows the similar region",
			content: "one\nreturn a + b\nthree\n",
			patch:   "--- a/f\n+++ b/f\n@@\n-return a - b\n+return 0\n",
			err:     "most similar region of the file is around line 2:\n     1 | one\n     2 | return a + b",
		},
		{
			name:    "second hunk named in the error",
			content: "a\nb\nc\n",
			patch:   "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+A\n@@ -3 +3 @@\n-q\n+Q\n",
			err:     "f: hunk 2 of 2 does not match the file (its header says line 3; the file has 3 lines)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := apply1(tt.content, tt.patch)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want it to contain %q (result %q)", err, tt.err, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestApplyManyCandidates(t *testing.T) {
	t.Parallel()
	content := strings.Repeat("same\n", 3*maxMatches)
	_, err := apply1(content, "--- a/f\n+++ b/f\n@@\n-same\n+other\n")
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("at least %d places", maxMatches)) {
		t.Fatalf("err = %v", err)
	}
}

func TestApplyFileProblems(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, data := range map[string]string{"file.txt": "x\n", "bin.dat": "a\x00b\n", "sub/keep": "k\n"} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	big := fstest.MapFS{"big": {Data: make([]byte, MaxFileBytes+1)}}
	tests := []struct {
		name, patch, want string
		fsys              any
	}{
		{"parent is a file", "*** Add File: file.txt/child\n+x\n*** End Patch\n", "a parent of this path is a file", nil},
		{"directory", "--- a/sub\n+++ b/sub\n@@\n-k\n+K\n", "is a directory", nil},
		{"binary", "--- a/bin.dat\n+++ b/bin.dat\n@@\n-a\n+b\n", "looks binary", nil},
		{"too large", "--- a/big\n+++ b/big\n@@\n-a\n+b\n", "apply_patch edits files up to", big},
		{"delete missing", "*** Delete File: nope.txt\n*** End Patch\n", "nope.txt does not exist", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := Parse(tt.patch)
			if err != nil {
				t.Fatal(err)
			}
			var fsys = os.DirFS(dir)
			if tt.fsys != nil {
				fsys = tt.fsys.(fstest.MapFS)
			}
			_, err = Apply(fsys, p)
			var pe *Error
			if !errors.As(err, &pe) || pe.Kind != KindRejected || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want a rejection containing %q", err, tt.want)
			}
		})
	}
}

func TestApplyReportsEveryFile(t *testing.T) {
	t.Parallel()
	p, err := Parse("--- a/a\n+++ b/a\n@@\n-x\n+y\n--- a/b\n+++ b/b\n@@ -1 +1 @@\n-x\n+y\n*** ignored\n")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Apply(fstest.MapFS{"a": {Data: []byte("q\n")}}, p)
	var pe *Error
	if !errors.As(err, &pe) || len(pe.Problems) != 2 || len(pe.Missing) != 1 || pe.Missing[0] != "b" {
		t.Fatalf("err = %#v", err)
	}
}

// BenchmarkApply measures locating hunks in a large file and in a
// pathological one (every line the same but the last).
func BenchmarkApply(b *testing.B) {
	var big strings.Builder
	for i := range 200000 {
		fmt.Fprintf(&big, "line %d: value = compute(%d)\n", i, i%97)
	}
	var hunks strings.Builder
	hunks.WriteString("--- a/f\n+++ b/f\n")
	for i := 1000; i < 200000; i += 4000 {
		fmt.Fprintf(&hunks, "@@\n line %d: value = compute(%d)\n-line %d: value = compute(%d)\n+changed %d\n", i, i%97, i+1, (i+1)%97, i)
	}
	same := strings.Repeat("a\n", 200000) + "b\n"
	for _, bc := range []struct{ name, content, patch string }{
		{"200k-lines-50-hunks", big.String(), hunks.String()},
		{"200k-identical-lines", same, "--- a/f\n+++ b/f\n@@\n a\n a\n-b\n+c\n"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			fsys := fstest.MapFS{"f": {Data: []byte(bc.content)}}
			for b.Loop() {
				p, err := Parse(bc.patch)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := Apply(fsys, p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestApplyKeepsBOM: a leading byte order mark matches only after
// normalisation, so a patch that does not mention it must not lose it or
// move it into the middle of the file (issue 9, item 7).
func TestApplyKeepsBOM(t *testing.T) {
	t.Parallel()
	const content = "\ufeffpackage main\n\nfunc main() {}\n"
	tests := []struct{ name, patch, want string }{
		{"first line replaced", "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-package main\n+package tool\n \n", "\ufeffpackage tool\n\nfunc main() {}\n"},
		{"line inserted before the first", "--- a/f\n+++ b/f\n@@ -1,2 +1,3 @@\n+// Command x.\n package main\n \n", "\ufeff// Command x.\npackage main\n\nfunc main() {}\n"},
		{"first line deleted", "--- a/f\n+++ b/f\n@@ -1,3 +1,2 @@\n-package main\n \n func main() {}\n", "\ufeff\nfunc main() {}\n"},
		{"BOM removed on purpose", "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-\ufeffpackage main\n+package main\n \n", "package main\n\nfunc main() {}\n"},
		{"untouched first line", "--- a/f\n+++ b/f\n@@ -2,2 +2,2 @@\n \n-func main() {}\n+func main() { run() }\n", "\ufeffpackage main\n\nfunc main() { run() }\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := apply1(content, tt.patch)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestApplyMixedLineEndings: in a file with CRLF and LF lines, a replaced
// line keeps its own ending, an added line its neighbour's, and no
// untouched line changes (issue 10, item 4).
func TestApplyMixedLineEndings(t *testing.T) {
	t.Parallel()
	const content = "a\r\nb\nc\r\nd\ne\n" // LF majority
	tests := []struct{ name, patch, want string }{
		{"replace CRLF line", "--- a/f\n+++ b/f\n@@\n b\n-c\n+C\n d\n", "a\r\nb\nC\r\nd\ne\n"},
		{"replace LF line", "--- a/f\n+++ b/f\n@@\n a\n-b\n+B\n c\n", "a\r\nB\nc\r\nd\ne\n"},
		{"add after CRLF line", "--- a/f\n+++ b/f\n@@\n c\n+c2\n d\n", "a\r\nb\nc\r\nc2\r\nd\ne\n"},
		{"add at the top", "--- a/f\n+++ b/f\n@@\n+top\n a\n b\n", "top\r\na\r\nb\nc\r\nd\ne\n"},
		{"replace one by two", "--- a/f\n+++ b/f\n@@\n b\n-c\n+c1\n+c2\n d\n", "a\r\nb\nc1\r\nc2\r\nd\ne\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := apply1(content, tt.patch)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestExactMatchBuildsNoIndex: a hunk that matches exactly is located by a
// scan, without the normalised copies, hashes and index of every line that
// the fuzzy levels need (issue 15); a fuzzy match still builds them.
func TestExactMatchBuildsNoIndex(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	data := []byte(b.String())
	built := func(t *target) bool {
		for lv := range numLevels {
			if t.norm[lv] != nil || t.hashes[lv] != nil || t.index[lv] != nil {
				return true
			}
		}
		return false
	}
	tg := &target{lines: splitLines(data)}
	pos, _, cands, _, _ := locate(tg, []string{"line 4000", "line 4001"}, 0, &Hunk{})
	if pos != 4000 || len(cands) != 1 || built(tg) {
		t.Fatalf("exact: pos %d, cands %v, index built %v", pos, cands, built(tg))
	}
	tg = &target{lines: splitLines(data)}
	pos, lv, _, _, _ := locate(tg, []string{"  line 4000", "line 4001  "}, 0, &Hunk{})
	if pos != 4000 || lv != levelTrim || !built(tg) {
		t.Fatalf("fuzzy: pos %d, level %d, index built %v", pos, lv, built(tg))
	}
}

// TestByLine holds the line-number tie-break to its rule: the nearest
// place, when the header gives a line, the place is within
// lineTieMaxDrift lines of it and every other place is at least twice as
// far; else none, with the reason.
func TestByLine(t *testing.T) {
	t.Parallel()
	many := make([]int, maxMatches)
	for i := range many {
		many[i] = i * 3
	}
	for _, c := range []struct {
		cands []int
		line  int64
		want  int
		why   string
	}{
		{[]int{1, 6}, 7, 6, ""},                                      // on B's first line
		{[]int{1, 6}, 2, 1, ""},                                      // on A's
		{[]int{1, 6}, 3, 1, ""},                                      // 1 from A, 4 from B
		{[]int{1, 7}, 5, -1, "as near to line 2 as to line 8"},       // 3 and 3
		{[]int{1, 7}, 3, 1, ""},                                      // 1 and 5
		{[]int{1, 7}, 4, 1, ""},                                      // 2 and 4: twice as near
		{[]int{1, 8}, 5, -1, "about as near to line 2 as to line 9"}, // 3 and 4
		{[]int{10, 20, 30}, 21, 20, ""},                              // 1, 9, 11
		{[]int{10, 20, 30}, 16, -1, "about as near"},                 // 5 and 5 (A and B)
		{[]int{1, 6}, 0, -1, "no line number"},
		{[]int{1, 6}, -3, -1, "no line number"},
		{[]int{1, 6}, 7 + lineTieMaxDrift + 10, -1, "lines from it"},
		{[]int{1, 500}, 500 + lineTieMaxDrift + 1, 500, ""}, // at the edge: 100 lines
		{[]int{1, 500}, 500 + lineTieMaxDrift + 2, -1, "101 lines from it"},
		{many, 31, -1, "too many places"},
		{[]int{1, 6}, 1 << 62, -1, "lines from it"}, // no overflow
	} {
		got, why := byLine(c.cands, c.line)
		if got != c.want || (c.why == "") != (why == "") || !strings.Contains(why, c.why) {
			t.Errorf("byLine(%v, %d) = %d %q, want %d %q", c.cands[:min(len(c.cands), 4)], c.line, got, why, c.want, c.why)
		}
	}
}
