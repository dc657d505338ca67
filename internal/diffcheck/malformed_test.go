package diffcheck

import (
	"errors"
	"strings"
	"testing"
)

// memSource serves fixed contents; a missing file is an error.
type memSource struct{ before, after map[string]string }

func (m memSource) Before(p string) ([]byte, error) { return get(m.before, p) }
func (m memSource) After(p string) ([]byte, error)  { return get(m.after, p) }

func get(files map[string]string, p string) ([]byte, error) {
	s, ok := files[p]
	if !ok {
		return nil, errors.New("no such file")
	}
	return []byte(s), nil
}

const goodGoDiff = `diff --git a/x_test.go b/x_test.go
--- a/x_test.go
+++ b/x_test.go
@@ -1,3 +1,4 @@
 package x
 
+// comment
 func TestA(t *testing.T) {}
`

func TestMalformed(t *testing.T) {
	t.Parallel()
	src := memSource{
		before: map[string]string{"x_test.go": "package x\n\nfunc TestA(t *testing.T) {}\n"},
		after:  map[string]string{"x_test.go": "package x\n\n// comment\nfunc TestA(t *testing.T) {}\n"},
	}
	if _, err := Check(goodGoDiff, src, Options{}); err != nil {
		t.Fatalf("the well-formed control diff failed: %v", err)
	}
	tests := []struct {
		name, diff string
		src        Source
		wantErr    string
	}{
		{"not a diff", "hello world\nthis is not a patch\n", src, "names no file"},
		{"hunk counts lie", strings.Replace(goodGoDiff, "@@ -1,3 +1,4 @@", "@@ -1,9 +1,9 @@", 1), src, "does not parse"},
		{"lines without a hunk header", "--- a/x_test.go\n+++ b/x_test.go\n+added\n", src, "names no file"},
		{"path leaves the repository", strings.ReplaceAll(goodGoDiff, "x_test.go", "../../etc/x_test.go"), src, "outside the repository"},
		{"absolute path", "--- /etc/passwd\n+++ /etc/passwd\n@@ -1 +1 @@\n-a\n+b\n", src, "outside the repository"},
		{"after file does not parse", goodGoDiff, memSource{before: src.before, after: map[string]string{"x_test.go": "package x\nfunc {"}}, "does not parse as Go"},
		{"after file missing", goodGoDiff, memSource{before: src.before}, "after the fix"},
		{"too large", strings.Repeat("+", MaxDiffSize+1), src, "more than"},
	}
	for _, tc := range tests {
		got, err := Check(tc.diff, tc.src, Options{})
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: err = %v, want one containing %q", tc.name, err, tc.wantErr)
		}
		if got != nil {
			t.Errorf("%s: findings %v returned with an error", tc.name, got)
		}
	}
	if got, err := Check("", src, Options{}); err != nil || len(got) != 0 {
		t.Errorf("empty diff: %v, %v; want no findings, no error", got, err)
	}
}

func TestDirsRefusesEscape(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d := Dirs{BeforeDir: dir, AfterDir: dir}
	for _, p := range []string{"../x", "/etc/passwd", "a/../../x", `a\..\x`, ""} {
		if _, err := d.Before(p); err == nil {
			t.Errorf("Before(%q) read outside the tree", p)
		}
	}
}

// FuzzDiffcheck feeds arbitrary diffs: Check returns findings or an error,
// never panics, and never reports a finding without a check and a file.
func FuzzDiffcheck(f *testing.F) {
	f.Add(goodGoDiff)
	f.Add("diff --git a/t.py b/t.py\n--- a/t.py\n+++ b/t.py\n@@ -1,2 +1,3 @@\n def test_a():\n+    time.sleep(1)\n     assert x\n")
	f.Add("diff --git a/go.mod b/go.mod\nindex 1..2 100644\n--- a/go.mod\n+++ b/go.mod\n@@ -1 +1 @@\n-go 1.22\n+go 1.23\n")
	f.Add("diff --git a/a_test.go b/b_test.go\nsimilarity index 100%\nrename from a_test.go\nrename to b_test.go\n")
	f.Add("diff --git a/x.js b/x.js\ndeleted file mode 100644\n--- a/x.js\n+++ /dev/null\n@@ -1 +0,0 @@\n-it('a', () => {})\n")
	goSrc := "package x\n\nimport (\n\t\"testing\"\n\t\"time\"\n)\n\nfunc TestA(t *testing.T) {\n\ttime.Sleep(1)\n\tt.Error(1)\n}\n"
	src := fuzzSource(goSrc)
	f.Fuzz(func(t *testing.T, diff string) {
		got, err := Check(diff, src, Options{})
		if err != nil && got != nil {
			t.Fatalf("findings with an error: %v", got)
		}
		for _, fd := range got {
			if fd.Check == "" || fd.File == "" || fd.Reason == "" || (fd.Severity != Reject && fd.Severity != Flag) {
				t.Fatalf("incomplete finding %+v", fd)
			}
		}
	})
}

// fuzzSource answers every path with the same Go file.
type fuzzSource string

func (s fuzzSource) Before(string) ([]byte, error) { return []byte(s), nil }
func (s fuzzSource) After(string) ([]byte, error)  { return []byte(s), nil }
