package pipeline

import (
	"archive/zip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/org/mini-agent/internal/testcmd"
)

// moduleProxy serves testdata/proof/proxy/adder as example.com/adder
// v1.0.0 from a file:// module proxy in a temporary directory, and returns
// the environment that makes go use it with a module cache of the test's
// own (no network, no checksum database).
func moduleProxy(t *testing.T) []string {
	t.Helper()
	root := t.TempDir()
	v := filepath.Join(root, "example.com", "adder", "@v")
	if err := os.MkdirAll(v, 0o755); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join("testdata", "proof", "proxy", "adder")
	gomod, err := os.ReadFile(filepath.Join(src, "go.mod.txt"))
	if err != nil {
		t.Fatal(err)
	}
	code, err := os.ReadFile(filepath.Join(src, "adder.go"))
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(v, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("list", []byte("v1.0.0\n"))
	write("v1.0.0.info", []byte(`{"Version":"v1.0.0","Time":"2026-01-01T00:00:00Z"}`))
	write("v1.0.0.mod", gomod)
	f, err := os.Create(filepath.Join(v, "v1.0.0.zip"))
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for name, data := range map[string][]byte{"go.mod": gomod, "adder.go": code} {
		w, err := zw.Create("example.com/adder@v1.0.0/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	modcache := t.TempDir()
	t.Cleanup(func() { makeWritable(modcache) }) // go makes its files read-only
	return []string{"GOPROXY=file://" + filepath.ToSlash(root), "GOSUMDB=off", "GONOSUMDB=*", "GOMODCACHE=" + modcache, "GOFLAGS=-mod=readonly"}
}

// makeWritable lets t.TempDir's cleanup remove a module cache (go makes
// its files and directories read-only).
func makeWritable(dir string) {
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil {
			os.Chmod(p, 0o755)
		}
		return nil
	})
}

func goRun(t *testing.T, dir string, env []string, args ...string) {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func mustParse(t *testing.T, line string) *testcmd.Command {
	t.Helper()
	c, err := testcmd.Parse(line)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
