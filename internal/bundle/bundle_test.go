package bundle

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/org/mini-agent/agent"
)

const diff = `diff --git a/a.go b/a.go
index 1111111..2222222 100644
--- a/a.go
+++ b/a.go
@@ -1 +1 @@
-package a
+package b
`

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	b := &Bundle{Version: Version, Mode: "fix", Status: StatusFixed, Diff: diff,
		Files:      []File{{Path: "a.go", Status: "modified", Mode: "100644", Content: []byte("package b\n")}},
		Validation: []Check{{Name: "full", Passed: true}}}
	p := filepath.Join(t.TempDir(), "b.json")
	if err := b.Write(p); err != nil {
		t.Fatal(err)
	}
	got, err := Read(p)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, b) {
		t.Fatalf("round trip: %+v", got)
	}
	if !got.Validated() {
		t.Fatal("not validated")
	}
}

func TestReadRefusesBadBundles(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"version":       `{"version":9}`,
		"unknown field": `{"version":1,"evil":true}`,
		"files mismatch": `{"version":1,"diff":` + quote(diff) +
			`,"files":[{"path":"other.go","status":"modified"}]}`,
		"files without diff": `{"version":1,"files":[{"path":"a.go"}]}`,
		"garbage diff":       `{"version":1,"diff":"@@ nonsense","files":[{"path":"a.go"}]}`,
	}
	for name, content := range cases {
		p := filepath.Join(t.TempDir(), "b.json")
		os.WriteFile(p, []byte(content), 0o644)
		if _, err := Read(p); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func quote(s string) string {
	return `"` + strings.NewReplacer("\n", `\n`, `"`, `\"`).Replace(s) + `"`
}

func TestStepsFromEvents(t *testing.T) {
	t.Parallel()
	ev := []agent.Event{
		{Type: agent.EventToolStart, Data: map[string]any{"tool": "x"}},
		{Type: agent.EventToolEnd, Data: map[string]any{"step": 2, "tool": "search", "args": "query=x", "outcome": "ok", "duration": "1ms"}},
		{Type: agent.EventToolEnd, Data: map[string]any{"step": float64(3), "tool": "apply_patch", "outcome": "error", "code": "PATCH_REJECTED"}},
	}
	got := StepsFromEvents(ev)
	want := []Step{{Step: 2, Tool: "search", Args: "query=x", Outcome: "ok", Duration: "1ms"},
		{Step: 3, Tool: "apply_patch", Outcome: "error", Code: "PATCH_REJECTED"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v", got)
	}
}
