package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A JavaScript workspace with its dependencies installed (ignored
// node_modules) under a directory only its owner may enter: the harness's
// clean checkouts read the dependencies, so a real fix is proven; as root,
// their runs keep the workspace's identity, and the run says why.
func TestInstalledDependenciesEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	t.Parallel()
	ws := t.TempDir()
	files := map[string]string{
		"package.json":                     `{"name":"shop","version":"1.0.0","private":true,"scripts":{"test":"node --test"}}` + "\n",
		".gitignore":                       "node_modules/\n",
		"price.js":                         "const pad = require('padder');\n// cents renders an amount in cents as \"D.CC\".\nfunction cents(n) { return Math.floor(n / 100) + '.' + pad(n % 10, 2); }\nmodule.exports = { cents };\n",
		"test/price.test.js":               "const test = require('node:test');\nconst assert = require('node:assert');\nconst { cents } = require('../price.js');\ntest('cents pads', () => { assert.strictEqual(cents(1234), '12.34'); });\n",
		"node_modules/padder/index.js":     "module.exports = (s, n) => String(s).padStart(n, '0');\n",
		"node_modules/padder/package.json": `{"name":"padder","version":"1.0.0","main":"index.js"}` + "\n",
	}
	for name, content := range files {
		p := filepath.Join(ws, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"},
		{"-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "shop"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = ws
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.Chmod(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	script := writeScript(t, []byte(`{"tool_calls": [{"name": "apply_patch", "arguments": {"patch": "--- a/price.js\n+++ b/price.js\n@@ -3 +3 @@\n-function cents(n) { return Math.floor(n / 100) + '.' + pad(n % 10, 2); }\n+function cents(n) { return Math.floor(n / 100) + '.' + pad(n % 100, 2); }\n"}}]}
{"message": "## Summary\nthe remainder is of 100\n## Root cause\nprice.js:3\n## Assumptions\n- none"}
`))
	out := t.TempDir()
	r := runBinary(t, context.Background(), nil, "fix", "--workdir", ws, "--test-command", "node --test",
		"--provider", "script", "--script", script, "--bundle", filepath.Join(out, "bundle.json"))
	b := readBundle(t, filepath.Join(out, "bundle.json"))
	if r.code != 0 || b.Status != "fixed" {
		t.Fatalf("exit %d, status %s, warnings %q\nstderr: %s", r.code, b.Status, b.Warnings, r.stderr)
	}
	warned := strings.Contains(strings.Join(b.Warnings, "\n"), "could not read the installed dependencies")
	// As root with the isolation set up, the runs would be nobody's, who
	// cannot enter the workspace: they keep its identity, and say so.
	if asRoot := os.Geteuid() == 0 && strings.Contains(b.Isolation, "(via root)"); asRoot != warned {
		t.Fatalf("as root with isolation %v, warned %v: isolation %q, warnings %q", asRoot, warned, b.Isolation, b.Warnings)
	}
}
