package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/internal/patch/patchtest"
)

// apFile is a test file: content and permission bits (0 means 0644).
type apFile struct {
	data string
	perm fs.FileMode
}

// apWorkspace writes files into a fresh directory and opens it.
func apWorkspace(t *testing.T, files map[string]apFile) (*Workspace, string) {
	t.Helper()
	dir := t.TempDir()
	for p, f := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		perm := f.perm
		if perm == 0 {
			perm = 0o644
		}
		if err := os.WriteFile(full, []byte(f.data), perm); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(full, perm); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := OpenWorkspace(dir, WorkspaceOptions{RunsDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws, dir
}

// apTree reads every regular file under dir with its permission bits.
func apTree(t *testing.T, dir string) map[string]apFile {
	t.Helper()
	out := map[string]apFile{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Type()&fs.ModeSymlink != 0 {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = apFile{string(data), fi.Mode().Perm()}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func apArgs(t *testing.T, text string) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(map[string]string{"patch": text})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func apRun(t *testing.T, ws *Workspace, text string) agent.Result {
	t.Helper()
	res, err := NewApplyPatch(ws).Execute(context.Background(), apArgs(t, text))
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	return res
}

func apSameTree(t *testing.T, got, want map[string]apFile) {
	t.Helper()
	var keys []string
	for k := range got {
		keys = append(keys, k)
	}
	for k := range want {
		if _, ok := got[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		g, gok := got[k]
		w, wok := want[k]
		if !gok || !wok || g.data != w.data || (w.perm != 0 && g.perm != w.perm) {
			t.Errorf("%s: got %q (%o, present %v), want %q (%o, present %v)", k, g.data, g.perm, gok, w.data, w.perm, wok)
		}
	}
}

// TestApplyPatchCorpus runs the whole robustness corpus through the tool on
// real files: same outcomes as the engine (or the tool-level override), and
// a refused patch leaves the tree byte for byte as it was.
func TestApplyPatchCorpus(t *testing.T) {
	t.Parallel()
	cases, err := patchtest.Load(filepath.Join("..", "internal", "patch", "testdata", "corpus"))
	if err != nil {
		t.Fatal(err)
	}
	toTree := func(files map[string]patchtest.File) map[string]apFile {
		out := map[string]apFile{}
		for p, f := range files {
			perm := fs.FileMode(0o644)
			if f.Exec {
				perm = 0o755
			}
			out[p] = apFile{string(f.Data), perm}
		}
		return out
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			want := c.Want
			if c.Tools != nil {
				want = *c.Tools
			}
			before := toTree(c.Files)
			ws, dir := apWorkspace(t, before)
			res := apRun(t, ws, c.Patch)
			if !want.Applied {
				if !res.IsError || !strings.Contains(res.Text, want.Substring) || !strings.Contains(res.Text, "no files were changed") {
					t.Fatalf("result %+v, want an error containing %q", res, want.Substring)
				}
				apSameTree(t, apTree(t, dir), before)
				return
			}
			if res.IsError {
				t.Fatalf("refused: %s", res.Text)
			}
			apSameTree(t, apTree(t, dir), toTree(c.Result))
		})
	}
}

const apCalc = "package calc\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n"

func TestApplyPatchProtectedMultiFile(t *testing.T) {
	t.Parallel()
	before := map[string]apFile{
		"calc.go":                 {apCalc, 0},
		".github/workflows/x.yml": {"on: push\n", 0},
	}
	ws, dir := apWorkspace(t, before)
	res := apRun(t, ws, "*** Begin Patch\n*** Update File: calc.go\n@@\n-\treturn a + b\n+\treturn b + a\n*** Add File: new.go\n+package calc\n*** Update File: .github/workflows/x.yml\n@@\n-on: push\n+on: [push, pull_request]\n*** End Patch\n")
	if !res.IsError || res.Code != agent.CodeDenied || !strings.Contains(res.Text, "protected") || !strings.Contains(res.Text, "no files were changed") {
		t.Fatalf("result %+v, want DENIED naming the protected path", res)
	}
	apSameTree(t, apTree(t, dir), before)
}

func TestApplyPatchRollback(t *testing.T) {
	t.Parallel()
	before := map[string]apFile{
		"a.txt":      {"a1\na2\n", 0o600},
		"run.sh":     {"#!/bin/sh\necho a\n", 0o755},
		"d.txt":      {"gone?\n", 0o640},
		"e.txt":      {"e\n", 0},
		"z/last.txt": {"z1\n", 0},
	}
	ws, dir := apWorkspace(t, before)
	tool := NewApplyPatch(ws)
	// The last file is replaced by a non-empty directory just before it is
	// written, so the rename onto it fails after four operations succeeded.
	tool.commit.BeforeEach = func(p string) {
		if p == "z/last.txt" {
			full := filepath.Join(dir, "z", "last.txt")
			os.Remove(full)
			os.MkdirAll(filepath.Join(full, "inner"), 0o755)
		}
	}
	text := `*** Begin Patch
*** Add File: newdir/sub/n.txt
+new
*** Update File: a.txt
@@
-a2
+A2
*** Update File: run.sh
@@
-echo a
+echo b
*** Delete File: d.txt
*** Update File: e.txt
*** Move to: moved/e.txt
@@
-e
+E
*** Update File: z/last.txt
@@
-z1
+Z1
*** End Patch
`
	res, err := tool.Execute(context.Background(), apArgs(t, text))
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	if !res.IsError || res.Code != agent.CodeFailed || !strings.Contains(res.Text, "restored") {
		t.Fatalf("result %+v, want FAILED with a restore note", res)
	}
	got := apTree(t, dir)
	want := map[string]apFile{}
	for k, v := range before {
		if k != "z/last.txt" {
			want[k] = v
		}
	}
	apSameTree(t, got, want)
	for _, gone := range []string{"newdir", "moved"} {
		if _, err := os.Lstat(filepath.Join(dir, gone)); !os.IsNotExist(err) {
			t.Errorf("%s survived the rollback: %v", gone, err)
		}
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, "*", ".mini-agent-*")); len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

func TestApplyPatchReadOnlyDirRollback(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("running as root: directory permissions do not stop writes (TestApplyPatchRollback covers the rollback)")
	}
	before := map[string]apFile{"a.txt": {"a\n", 0}, "ro/x.txt": {"x\n", 0}}
	ws, dir := apWorkspace(t, before)
	if err := os.Chmod(filepath.Join(dir, "ro"), 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(dir, "ro"), 0o755) })
	res := apRun(t, ws, "--- a/a.txt\n+++ b/a.txt\n@@\n-a\n+A\n--- a/ro/x.txt\n+++ b/ro/x.txt\n@@\n-x\n+X\n")
	if !res.IsError || res.Code != agent.CodeFailed {
		t.Fatalf("result %+v, want FAILED", res)
	}
	apSameTree(t, apTree(t, dir), before)
}

func TestApplyPatchModesAndLineEndings(t *testing.T) {
	t.Parallel()
	ws, dir := apWorkspace(t, map[string]apFile{
		"run.sh":   {"#!/bin/sh\necho a\n", 0o755},
		"secret":   {"k=1\n", 0o600},
		"win.txt":  {"one\r\ntwo\r\nthree\r\n", 0},
		"tool.py":  {"print(1)\n", 0},
		"keep.txt": {"same\n", 0o640},
	})
	res := apRun(t, ws, `diff --git a/run.sh b/run.sh
--- a/run.sh
+++ b/run.sh
@@ -1,2 +1,3 @@
 #!/bin/sh
 echo a
+echo b
--- a/secret
+++ b/secret
@@
-k=1
+k=2
--- a/win.txt
+++ b/win.txt
@@
 two
+two and a half
 three
diff --git a/tool.py b/tool.py
old mode 100644
new mode 100755
`)
	if res.IsError {
		t.Fatal(res.Text)
	}
	apSameTree(t, apTree(t, dir), map[string]apFile{
		"run.sh":   {"#!/bin/sh\necho a\necho b\n", 0o755},
		"secret":   {"k=2\n", 0o600},
		"win.txt":  {"one\r\ntwo\r\ntwo and a half\r\nthree\r\n", 0o644},
		"tool.py":  {"print(1)\n", 0o755},
		"keep.txt": {"same\n", 0o640},
	})
	for _, want := range []string{"4 file(s) changed", "run.sh | +1 -0", "win.txt | +1 -0", "tool.py (mode 644 => 755)"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("summary %q lacks %q", res.Text, want)
		}
	}
}

func TestApplyPatchSymlinks(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("top\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, dir := apWorkspace(t, map[string]apFile{"real.go": {apCalc, 0}})
	for link, target := range map[string]string{
		"abs.txt": secret,                                         // absolute, outside
		"rel.txt": "../" + filepath.Base(outside) + "/secret.txt", // relative, outside
		"extdir":  outside,                                        // directory outside
		"link.go": "real.go",                                      // inside
	} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	escapes := []string{
		"--- a/abs.txt\n+++ b/abs.txt\n@@\n-top\n+pwned\n",
		"--- a/rel.txt\n+++ b/rel.txt\n@@\n-top\n+pwned\n",
		"--- a/extdir/secret.txt\n+++ b/extdir/secret.txt\n@@\n-top\n+pwned\n",
		"*** Begin Patch\n*** Add File: extdir/new.txt\n+x\n*** End Patch\n",
		"*** Begin Patch\n*** Delete File: link.go\n*** End Patch\n",
	}
	for _, text := range escapes {
		res := apRun(t, ws, text)
		if !res.IsError || res.Code != agent.CodeDenied || !strings.HasSuffix(strings.TrimSuffix(res.Text, `","retryable":false}`), "no files were changed") {
			t.Errorf("patch %q: result %+v, want DENIED", text, res)
		}
	}
	if b, _ := os.ReadFile(secret); string(b) != "top\n" {
		t.Fatalf("outside file changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(outside, "new.txt")); !os.IsNotExist(err) {
		t.Fatalf("file created outside: %v", err)
	}
	// A link inside the workspace is followed: the real file changes and
	// the link stays a link.
	res := apRun(t, ws, "--- a/link.go\n+++ b/link.go\n@@\n-\treturn a + b\n+\treturn b + a\n")
	if res.IsError {
		t.Fatal(res.Text)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "real.go")); !bytes.Contains(b, []byte("return b + a")) {
		t.Fatalf("real.go not patched: %q", b)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "link.go")); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("link.go is no longer a symlink: %v", err)
	}
}

func TestApplyPatchErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, args, code, want string
	}{
		{"not json", `{"patch":`, agent.CodeInvalidArgument, "JSON object"},
		{"no patch", `{"diff":"x"}`, agent.CodeInvalidArgument, `"patch" argument is required`},
		{"garbage", `{"patch":"please fix it"}`, agent.CodeInvalidArgument, "no file changes"},
		{"git dir", `{"patch":"*** Add File: .git/hooks/x\n+y\n"}`, agent.CodeDenied, ".git"},
		{"dotdot", `{"patch":"*** Add File: ../x\n+y\n"}`, agent.CodeDenied, "'..'"},
		{"env file", `{"patch":"*** Add File: sub/.env\n+K=1\n*** End Patch\n"}`, agent.CodeDenied, "protected"},
		{"mismatch", `{"patch":"--- a/calc.go\n+++ b/calc.go\n@@\n-\treturn a - b\n+\treturn 0\n"}`, agent.CodePatchRejected, "return a + b"},
		{"did you mean", `{"patch":"--- a/calcs.go\n+++ b/calcs.go\n@@\n-\treturn a + b\n+\treturn 0\n"}`, agent.CodePatchRejected, "Did you mean: calc.go?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			before := map[string]apFile{"calc.go": {apCalc, 0}}
			ws, dir := apWorkspace(t, before)
			res, err := NewApplyPatch(ws).Execute(context.Background(), json.RawMessage(tt.args))
			if err != nil {
				t.Fatal(err)
			}
			var body struct{ Code, Message string }
			if err := json.Unmarshal([]byte(res.Text), &body); err != nil {
				t.Fatalf("result text is not the error JSON: %q", res.Text)
			}
			if !res.IsError || res.Code != tt.code || body.Code != tt.code || !strings.Contains(body.Message, tt.want) || !strings.HasSuffix(body.Message, "no files were changed") {
				t.Fatalf("result %+v, want %s containing %q", res, tt.code, tt.want)
			}
			apSameTree(t, apTree(t, dir), before)
		})
	}
}

func TestApplyPatchGoSyntaxWarning(t *testing.T) {
	t.Parallel()
	ws, dir := apWorkspace(t, map[string]apFile{"calc.go": {apCalc, 0}})
	tool := NewApplyPatch(ws)
	res, err := tool.Execute(context.Background(), apArgs(t, "--- a/calc.go\n+++ b/calc.go\n@@\n-\treturn a + b\n+\treturn a +\n"))
	if err != nil || res.IsError {
		t.Fatalf("result %+v, err %v", res, err)
	}
	if !strings.Contains(res.Text, "warning: calc.go does not parse as Go") {
		t.Fatalf("no syntax warning in %q", res.Text)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "calc.go")); !strings.Contains(string(b), "return a +\n") {
		t.Fatalf("patch not applied: %q", b)
	}
	if d := tool.LastDiff(); !strings.HasPrefix(d, "diff --git a/calc.go b/calc.go\n") || !strings.Contains(d, "+\treturn a +\n") {
		t.Fatalf("LastDiff = %q", d)
	}
	res = apRun(t, ws, "--- a/calc.go\n+++ b/calc.go\n@@\n-\treturn a +\n+\treturn a + b\n")
	if res.IsError || strings.Contains(res.Text, "warning") {
		t.Fatalf("clean patch got %q", res.Text)
	}
}

// TestApplyPatchGoSyntaxWarningLargeFile: above goWholeParse only the
// changed declarations are parsed first, yet a broken edit still gets the
// whole file's warning, and a clean one none.
func TestApplyPatchGoSyntaxWarningLargeFile(t *testing.T) {
	t.Parallel()
	content, _, _ := benchPatchInput(goWholeParse*2, "go")
	lines := strings.Split(string(content), "\n")
	// Line k is "func Fx(x int) int {" in the middle of the file; k+5 is
	// its "\treturn y + n" and k+6 its closing brace.
	k := len(lines) / 2
	for !strings.HasPrefix(lines[k], "func F") {
		k++
	}
	ctx := func(from, to int) string { // unchanged lines from..to-1
		var b strings.Builder
		for _, l := range lines[from:to] {
			b.WriteString(" " + l + "\n")
		}
		return b.String()
	}
	head := "--- a/big.go\n+++ b/big.go\n@@\n"
	tests := []struct {
		name, patch string
		warn        bool
	}{
		{"clean edit", head + ctx(k, k+5) + "-" + lines[k+5] + "\n+" + lines[k+5] + " * 2\n" + ctx(k+6, k+7), false},
		{"broken expression", head + ctx(k, k+5) + "-" + lines[k+5] + "\n+\treturn y +\n" + ctx(k+6, k+7), true},
		{"closing brace removed", head + ctx(k, k+6) + "-" + lines[k+6] + "\n" + ctx(k+7, k+8), true},
		{"unterminated comment", head + ctx(k, k+2) + "+\t/* note\n" + ctx(k+2, k+3), true},
		{"declaration removed whole", head + ctx(k-2, k-1) + "-" + strings.Join(lines[k-1:k+8], "\n-") + "\n" + ctx(k+8, k+9), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ws, _ := apWorkspace(t, map[string]apFile{"big.go": {string(content), 0}})
			res := apRun(t, ws, tt.patch)
			if res.IsError {
				t.Fatalf("refused: %s", res.Text)
			}
			if got := strings.Contains(res.Text, "warning: big.go does not parse as Go"); got != tt.warn {
				t.Fatalf("warning %v, want %v: %q", got, tt.warn, res.Text)
			}
		})
	}
}

func TestApplyPatchTouchedPaths(t *testing.T) {
	t.Parallel()
	ws, dir := apWorkspace(t, map[string]apFile{"real.go": {apCalc, 0}, "old.txt": {"x\n", 0}})
	if err := os.Symlink("real.go", filepath.Join(dir, "link.go")); err != nil {
		t.Fatal(err)
	}
	tool := NewApplyPatch(ws)
	got, err := tool.TouchedPaths(apArgs(t, "*** Begin Patch\n*** Update File: old.txt\n*** Move to: new/name.txt\n*** Update File: link.go\n@@\n-\treturn a + b\n+\treturn 0\n*** Delete File: gone.txt\n*** End Patch\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "old.txt new/name.txt link.go gone.txt real.go"; strings.Join(got, " ") != want {
		t.Fatalf("TouchedPaths = %q, want %q", got, want)
	}
	if _, err := tool.TouchedPaths(json.RawMessage(`{"patch":"nothing"}`)); err == nil {
		t.Fatal("TouchedPaths accepted a patch without files")
	}
}

func TestApplyPatchSpecAndCancel(t *testing.T) {
	t.Parallel()
	ws, dir := apWorkspace(t, map[string]apFile{"calc.go": {apCalc, 0}})
	tool := NewApplyPatch(ws)
	spec := tool.Spec()
	var schema struct {
		Required   []string                   `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(spec.InputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	if spec.Name != "apply_patch" || !tool.Mutates() || len(schema.Required) != 1 || schema.Required[0] != "patch" || schema.Properties["patch"] == nil {
		t.Fatalf("spec %+v", spec)
	}
	var _ agent.Tool = tool
	var _ agent.PathToucher = tool
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := tool.Execute(ctx, apArgs(t, "--- a/calc.go\n+++ b/calc.go\n@@\n-\treturn a + b\n+\treturn 0\n")); err == nil {
		t.Fatal("cancelled call returned no error")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "calc.go")); string(b) != apCalc {
		t.Fatal("cancelled call wrote")
	}
}
