package patch

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// parseWithin fails the test if Parse does not return within a second: the
// parsers must always make progress, whatever the input.
func parseWithin(t *testing.T, text string) (*Patch, error) {
	t.Helper()
	type out struct {
		p   *Patch
		err error
	}
	ch := make(chan out, 1)
	go func() {
		p, err := Parse(text)
		ch <- out{p, err}
	}()
	select {
	case o := <-ch:
		return o.p, o.err
	case <-time.After(time.Second):
		t.Fatalf("Parse(%q) did not return", text)
		return nil, nil
	}
}

func TestParseTerminates(t *testing.T) {
	t.Parallel()
	for _, text := range []string{
		"*** Update File: a\n--- a/x\n+++ b/x\n",
		"*** Update File: a\n@@\n--- a/x\n+++ b/x\n@@\n",
		"--- a/x\n+++ b/x\n--- a/y\n+++ b/y\n",
		"--- a/x\n+++ b/x\n-- \n2.39\n",
		"*** Begin Patch\n*** Update File: a\n-- \n2.1\n*** End Patch",
	} {
		parseWithin(t, text)
	}
}

func TestParseShapes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		text  string
		paths []string
		ops   []Op
		hunks []int
	}{
		{"git quoted names", "diff --git \"a/sp ace.go\" \"b/sp ace.go\"\n--- \"a/sp ace.go\"\n+++ \"b/sp ace.go\"\n@@ -1 +1 @@\n-a\n+b\n", []string{"sp ace.go"}, []Op{OpUpdate}, []int{1}},
		{"octal quoted", "--- \"a/caf\\303\\251.txt\"\n+++ \"b/caf\\303\\251.txt\"\n@@\n-a\n+b\n", []string{"café.txt"}, []Op{OpUpdate}, []int{1}},
		{"timestamps", "--- a/x.c\t2024-01-01 00:00:00\n+++ b/x.c\t2024-01-02 00:00:00\n@@ -1 +1 @@\n-a\n+b\n", []string{"x.c"}, []Op{OpUpdate}, []int{1}},
		{"git spaces same name", "diff --git a/x y.txt b/x y.txt\ndeleted file mode 100644\n", []string{"x y.txt"}, []Op{OpDelete}, []int{0}},
		{"mixed prefix", "--- a/x.go\n+++ x.go\n@@\n-a\n+b\n", []string{"x.go"}, []Op{OpUpdate}, []int{1}},
		{"two files", "--- a/x\n+++ b/x\n@@\n-a\n+b\n--- a/y\n+++ b/y\n@@\n-c\n+d\n", []string{"x", "y"}, []Op{OpUpdate, OpUpdate}, []int{1, 1}},
		{"removed sql comment", "--- a/q.sql\n+++ b/q.sql\n@@\n--- old comment\n+++ new\n x\n", []string{"q.sql"}, []Op{OpUpdate}, []int{1}},
		{"envelope nested hints", "*** Begin Patch\n*** Update File: m.py\n@@ class A\n@@     def f(self):\n-        return 1\n+        return 2\n*** End Patch\n", []string{"m.py"}, []Op{OpUpdate}, []int{1}},
		{"envelope lowercase markers", "*** begin patch\n*** update file: a.txt\n@@\n-a\n+b\n*** end patch\n", []string{"a.txt"}, []Op{OpUpdate}, []int{1}},
		{"backslash path", "*** Update File: dir\\a.txt\n@@\n-a\n+b\n*** End Patch\n", []string{"dir/a.txt"}, []Op{OpUpdate}, []int{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := parseWithin(t, tt.text)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Files) != len(tt.paths) {
				t.Fatalf("got %d files, want %d", len(p.Files), len(tt.paths))
			}
			for i, f := range p.Files {
				if f.Path != tt.paths[i] || f.Op != tt.ops[i] || len(f.Hunks) != tt.hunks[i] {
					t.Errorf("file %d = %q %v %d hunks, want %q %v %d", i, f.Path, f.Op, len(f.Hunks), tt.paths[i], tt.ops[i], tt.hunks[i])
				}
			}
		})
	}
}

func TestParseNestedHints(t *testing.T) {
	t.Parallel()
	p, err := Parse("*** Update File: m.py\n@@ class A\n@@     def f(self):\n-        return 1\n+        return 2\n*** End Patch\n")
	if err != nil {
		t.Fatal(err)
	}
	h := p.Files[0].Hunks[0]
	if strings.Join(h.Hints, "|") != "class A|def f(self):" {
		t.Fatalf("hints = %q", h.Hints)
	}
}

func TestParseRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text, want string
		kind             ErrorKind
	}{
		{"too big", strings.Repeat("x", MaxPatchBytes+1), "limit", KindInvalid},
		{"copy", "diff --git a/x b/y\ncopy from x\ncopy to y\n", "copies", KindInvalid},
		{"rename half", "diff --git a/x b/y\nrename from x\n", "both", KindInvalid},
		{"two names", "--- a/x\n+++ b/y\n@@\n-a\n+b\n", "two different files", KindInvalid},
		{"create with context", "--- /dev/null\n+++ b/n\n@@\n ctx\n+a\n", "may only add", KindInvalid},
		{"add without plus", "*** Add File: n\nhello\n", "must start with '+'", KindInvalid},
		{"delete with body", "*** Delete File: n\n-a\n", "takes no lines", KindInvalid},
		{"move without update", "*** Add File: n\n+a\n*** Move to: m\n", "Move to", KindInvalid},
		{"nul path", "*** Update File: a\x00b\n@@\n-a\n+b\n", "control", KindInvalid},
		{"trailing space", "*** Update File: a.go \n@@\n-a\n+b\n*** End Patch\n", "", -1},
		{"dir path", "*** Delete File: src/\n", "directory", KindInvalid},
		{"nested .git", "*** Update File: sub/.git/config\n@@\n-a\n+b\n", ".git", KindUnsafePath},
		{"windows absolute", "*** Update File: C:\\x.txt\n@@\n-a\n+b\n", "absolute", KindUnsafePath},
		{"too many hunks", "--- a/x\n+++ b/x\n" + strings.Repeat("@@\n-a\n+b\n", MaxHunks+1), "hunks", KindInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := parseWithin(t, tt.text)
			if tt.kind < 0 { // accepted: surrounding spaces of a marker argument are trimmed
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var pe *Error
			if !errors.As(err, &pe) || pe.Kind != tt.kind || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want kind %v containing %q", err, tt.kind, tt.want)
			}
		})
	}
}
