package failure

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func manyFailures(n int) *FailureContext {
	fc := &FailureContext{Step: "Run go test ./...", ExitCode: 1, Source: "go"}
	for i := 0; i < n; i++ {
		fc.Failures = append(fc.Failures, Failure{ID: fmt.Sprintf("TestCase%03d", i), Package: "ex.com/p",
			Location: fmt.Sprintf("p/p_test.go:%d", 10+i), Message: fmt.Sprintf("case %d: got %s", i, strings.Repeat("v", 300)),
			Excerpt: strings.Repeat("excerpt line\n", 30), Count: 1})
	}
	return fc
}

func TestRenderBudget(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		n, budget   int
		excerpts    bool
		omittedNote bool
	}{
		{"all fits with excerpts", 2, 8192, true, false},
		{"excerpts dropped first", 20, 7600, false, false},
		{"failures omitted last", 200, 4096, false, true},
		{"tiny budget", 50, 300, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fc := manyFailures(tc.n)
			out := fc.Render(tc.budget)
			if len(out) > tc.budget {
				t.Fatalf("rendered %d bytes > budget %d", len(out), tc.budget)
			}
			if got := strings.Contains(out, "excerpt line"); got != tc.excerpts {
				t.Errorf("excerpts shown = %v, want %v", got, tc.excerpts)
			}
			if got := strings.Contains(out, "more failures omitted"); got != tc.omittedNote {
				t.Errorf("omission note = %v, want %v:\n%s", got, tc.omittedNote, out)
			}
			shown := 0
			for _, f := range fc.Failures {
				if strings.Contains(out, "- FAIL "+f.ID+" ") {
					shown++
					if !strings.Contains(out, "at "+f.Location+"\n") || !strings.Contains(out, firstLine(f.Message)[:12]) {
						t.Errorf("%s shown without its location or message", f.ID)
					}
				}
			}
			if shown == 0 && tc.budget > 500 {
				t.Errorf("no failure shown")
			}
			if tc.omittedNote && !strings.Contains(out, fmt.Sprintf("%d more failures omitted", tc.n-shown)) {
				t.Errorf("note does not count the %d omitted failures:\n%s", tc.n-shown, out[max(0, len(out)-200):])
			}
		})
	}
}

func TestRenderGenericAndDefaults(t *testing.T) {
	t.Parallel()
	fc := &FailureContext{Step: "Run make", Command: "make all", ExitCode: 2, Generic: strings.Repeat("line\n", 5000)}
	out := fc.Render(0)
	if len(out) > DefaultBudget || !strings.Contains(out, "Failed step: Run make (exit code 2)") || !strings.Contains(out, "Command: make all") {
		t.Errorf("generic render (%d bytes):\n%.300s", len(out), out)
	}
	fc.Budget = 1000
	if out := fc.Render(0); len(out) > 1000 {
		t.Errorf("context budget ignored: %d bytes", len(out))
	}
	if out := (&FailureContext{}).Render(0); !strings.Contains(out, "No failure was recognized") {
		t.Errorf("empty render: %q", out)
	}
}

func TestMergeAndSignature(t *testing.T) {
	t.Parallel()
	a := &FailureContext{Step: "Run go test", ExitCode: 1, Source: "go",
		Failures:    []Failure{{ID: "TestA", Package: "p", Message: "m", Count: 1}, {ID: "TestB", Package: "p", Count: 1}},
		BuildErrors: []BuildError{{Location: "x.go:1:2", Message: "undefined: y", Count: 1}}}
	b := &FailureContext{Source: "go-json", Failures: []Failure{{ID: "TestB", Package: "p", Location: "b_test.go:3", Count: 1},
		{ID: "TestA", Package: "other", Count: 1}}, BuildErrors: []BuildError{{Location: "x.go:1:2", Message: "undefined: y", Count: 1}}}
	m := Merge(a, nil, b)
	got := []string{}
	for _, f := range m.Failures {
		got = append(got, fmt.Sprintf("%s/%s=%d@%s", f.Package, f.ID, f.Count, f.Location))
	}
	if want := "p/TestA=1@ p/TestB=2@b_test.go:3 other/TestA=1@"; strings.Join(got, " ") != want {
		t.Errorf("merged %q, want %q", strings.Join(got, " "), want)
	}
	if len(m.BuildErrors) != 1 || m.BuildErrors[0].Count != 2 || m.Step != "Run go test" || m.Source != "go,go-json" {
		t.Errorf("merged %+v", m)
	}
	if ids := strings.Join(m.IDs(), ","); ids != "TestA,TestB" {
		t.Errorf("IDs %s", ids)
	}
	// The signature ignores order, messages and counts, not ids.
	reordered := &FailureContext{Failures: []Failure{{ID: "TestB", Package: "p", Message: "other"}, {ID: "TestA", Package: "p"}},
		BuildErrors: []BuildError{{Location: "x.go:1:2", Message: "changed"}}}
	if a.Signature() != reordered.Signature() || len(a.Signature()) != 16 {
		t.Errorf("signature not stable: %s %s", a.Signature(), reordered.Signature())
	}
	if a.Signature() == m.Signature() {
		t.Errorf("different failing sets share signature %s", a.Signature())
	}
	if (&FailureContext{Step: "a"}).Signature() == (&FailureContext{Step: "b"}).Signature() {
		t.Error("generic contexts of different steps share a signature")
	}
}

func TestLocationsRelativeToWorkspace(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	for _, f := range []string{"go.mod", "pkg/sub/a_test.go", "src/app.js"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(ws, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		body := ""
		if f == "go.mod" {
			body = "module example.com/m\n\ngo 1.22\n"
		}
		if err := os.WriteFile(filepath.Join(ws, f), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	n := newNormalizer(ws)
	tests := []struct{ loc, pkg, want string }{
		{ws + "/pkg/sub/a_test.go:12", "", "pkg/sub/a_test.go:12"},
		{"/home/runner/work/repo/repo/pkg/x.go:12", "", "pkg/x.go:12"},
		{"/__w/repo/repo/src/app.js:3:4", "", "src/app.js:3:4"},
		{`D:\a\repo\repo\src\app.js:3:4`, "", "src/app.js:3:4"},
		{"/somewhere/else/checkout/src/app.js:9", "", "src/app.js:9"},
		{"/usr/lib/node/x.js:9", "", "/usr/lib/node/x.js:9"},
		{"a_test.go:7", "example.com/m/pkg/sub", "pkg/sub/a_test.go:7"},
		{"a_test.go:7", "other.com/m/pkg/sub", "a_test.go:7"},
		{"./src/app.js:1:2", "", "src/app.js:1:2"},
		{"file:///x/y/z.js:1:2", "", "/x/y/z.js:1:2"},
		{"no location", "", "no location"},
	}
	for _, tc := range tests {
		if got := n.loc(tc.loc, tc.pkg); got != tc.want {
			t.Errorf("loc(%q, %q) = %q, want %q", tc.loc, tc.pkg, got, tc.want)
		}
	}
}

// TestLocationsInNestedModules: a test file name go test prints relative
// to its package is found in a module below the workspace's root (go -C
// sub test), with or without a module at the root; modules in skipped
// directories (vendor, testdata, hidden) are not looked in.
func TestLocationsInNestedModules(t *testing.T) {
	t.Parallel()
	for _, rootModule := range []bool{false, true} {
		ws := t.TempDir()
		files := map[string]string{
			"sub/go.mod":                 "module example.com/calc\n\ngo 1.22\n",
			"sub/calc_test.go":           "",
			"sub/deep/go.mod":            "module example.com/calc/deep\n",
			"sub/deep/x/x_test.go":       "",
			"vendor/v/go.mod":            "module example.com/v\n",
			"vendor/v/v_test.go":         "",
			"testdata/m/go.mod":          "module example.com/m2\n",
			"testdata/m/m_test.go":       "",
			"tools/cmd/go.mod":           "module \"example.com/tools\"\n",
			"tools/cmd/inner/in_test.go": "",
		}
		if rootModule {
			files["go.mod"] = "module example.com/root\n"
		}
		for f, body := range files {
			p := filepath.Join(ws, filepath.FromSlash(f))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		n := newNormalizer(ws)
		for _, tc := range []struct{ loc, pkg, want string }{
			{"calc_test.go:7", "example.com/calc", "sub/calc_test.go:7"},
			{"x_test.go:3", "example.com/calc/deep/x", "sub/deep/x/x_test.go:3"},
			{"in_test.go:1", "example.com/tools/inner", "tools/cmd/inner/in_test.go:1"},
			{"v_test.go:1", "example.com/v", "v_test.go:1"},
			{"m_test.go:1", "example.com/m2", "m_test.go:1"},
			{"missing_test.go:1", "example.com/calc", "missing_test.go:1"},
		} {
			if got := n.loc(tc.loc, tc.pkg); got != tc.want {
				t.Errorf("root module %v: loc(%q, %q) = %q, want %q", rootModule, tc.loc, tc.pkg, got, tc.want)
			}
		}
	}
}
