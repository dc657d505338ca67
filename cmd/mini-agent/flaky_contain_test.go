package main

import (
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/org/mini-agent/internal/flaky/flakytest"
)

// leakTest fails every run with the checkout's git config as its message:
// test code printing a persisted credential into the flaky report.
const leakTest = `package sum

import (
	"os"
	"testing"
)

func TestLeak(t *testing.T) {
	data, _ := os.ReadFile(".git/config")
	t.Fatal("CONFIG<<" + string(data) + ">>")
}
`

// flakyLeakModule is the always-failing module with leakTest, a git
// repository whose config persists actions/checkout's token.
func flakyLeakModule(t *testing.T, b64 string) string {
	dir := flakytest.CopyModule(t, filepath.Join("..", "..", "internal", "flakyrun", "testdata", "failing"))
	if err := os.WriteFile(filepath.Join(dir, "leak_test.go"), []byte(leakTest), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q", "--template="}, {"config", "http.https://github.com/.extraheader", "AUTHORIZATION: basic " + b64}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

// The flaky report and summary are redacted like a fix job's: test code
// that reads the persisted credential (the control: without the sandbox
// it can) never gets it into the JSON report, the summary or the
// progress; with the sandbox it cannot read it at all.
func TestFlakyReportNeverHoldsAPersistedCredential(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	t.Parallel()
	token := "ghs_" + "FLAKYcanary0123456789abcdefABCDEFghij"[:36]
	b64 := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + token))
	for _, mode := range []string{"no-sandbox", "sandbox"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			dir := flakyLeakModule(t, b64)
			jsonPath := filepath.Join(t.TempDir(), "flaky.json")
			args := []string{"flaky", "--workdir", dir, "--test-command", "go test ./...", "--max-runs", "2", "--json", jsonPath}
			if mode == "no-sandbox" {
				args = append(args, "--no-sandbox")
			}
			code, out, errOut := run(t, args...)
			data, err := os.ReadFile(jsonPath)
			if err != nil {
				t.Fatalf("exit %d: %v\n%s", code, err, errOut)
			}
			// The control: the test printed the config, as read.
			if !strings.Contains(string(data), "leak_test.go:10: CONFIG") {
				t.Fatalf("the leaking test's message is not in the report:\n%s", data)
			}
			if mode == "no-sandbox" && !strings.Contains(string(data), "extraheader") {
				t.Fatalf("control: without the sandbox the test should read the header:\n%s", data)
			}
			if mode == "sandbox" && strings.Contains(string(data), "extraheader") {
				t.Errorf("test code read the persisted header in the sandbox:\n%s", data)
			}
			for name, text := range map[string]string{"report": string(data), "summary": out, "progress": errOut} {
				for _, secret := range []string{token, b64} {
					if strings.Contains(text, secret) {
						t.Errorf("the credential reached the %s", name)
					}
				}
			}
		})
	}
}

// Test code plants a link at the --json path during the run: the report
// is not written through it, and the run says why.
func TestFlakyJSONNeverWrittenThroughAPlantedLink(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	t.Parallel()
	dir := flakytest.CopyModule(t, filepath.Join("..", "..", "internal", "flakyrun", "testdata", "failing"))
	out := t.TempDir()
	os.Chmod(out, 0o777)
	jsonPath := filepath.Join(out, "flaky.json")
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("victim\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	plant := "package sum\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestMain(m *testing.M) {\n\tos.Remove(" +
		strconvQuote(jsonPath) + ")\n\tos.Symlink(" + strconvQuote(victim) + ", " + strconvQuote(jsonPath) + ")\n\tos.Exit(m.Run())\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "plant_test.go"), []byte(plant), 0o644); err != nil {
		t.Fatal(err)
	}
	// Writable to test code, as a report directory in the temp dir is.
	code, _, errOut := run(t, "flaky", "--workdir", dir, "--test-command", "go test ./...", "--max-runs", "2", "--json", jsonPath,
		"--test-writable", out)
	if data, _ := os.ReadFile(victim); string(data) != "victim\n" {
		t.Errorf("the file outside was written through the link: %q", data)
	}
	if fi, err := os.Lstat(jsonPath); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("control: the test code did not plant its link: %v\n%s", err, errOut)
	}
	if code == 0 || !strings.Contains(errOut, jsonPath+" is a symbolic link: mini-agent does not write through links") {
		t.Errorf("exit %d; stderr does not say why the report is missing:\n%s", code, errOut)
	}
}

func strconvQuote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }
