package bundle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Isolation is an additive field: written when set, absent (and a bundle
// without it still read) otherwise.
func TestIsolationRoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b := &Bundle{Version: Version, Mode: "fix", Status: StatusFixed, Diff: diff,
		Files:      []File{{Path: "a.go", Status: "modified", Mode: "100644", Content: []byte("package b\n")}},
		Validation: []Check{{Name: "full", Passed: true}},
		Isolation:  "processes: cgroup v2; landlock ABI 7: writes limited"}
	p := filepath.Join(dir, "with.json")
	if err := b.Write(p); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(p)
	if !strings.Contains(string(raw), `"isolation": "processes: cgroup v2; landlock ABI 7: writes limited"`) {
		t.Fatalf("isolation not written:\n%s", raw)
	}
	got, err := Read(p)
	if err != nil {
		t.Fatal(err)
	}
	if got.Isolation != b.Isolation {
		t.Fatalf("read back %q", got.Isolation)
	}
	b.Isolation = ""
	p = filepath.Join(dir, "without.json")
	if err := b.Write(p); err != nil {
		t.Fatal(err)
	}
	if raw, _ := os.ReadFile(p); strings.Contains(string(raw), "isolation") {
		t.Fatalf("empty isolation written:\n%s", raw)
	}
}
