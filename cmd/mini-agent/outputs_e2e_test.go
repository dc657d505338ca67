//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/org/mini-agent/internal/demo"
)

// Test code plants symlinks at the paths mini-agent writes its outputs to
// (--bundle, --summary, --trace, in the workspace), pointing at files
// outside it ("bundle.json" → ~/.config/go/env): mini-agent must write
// through none of them, and say why each output is missing.

// outputNames are the outputs the hostile fixture targets, by flag.
var outputNames = map[string]string{"--bundle": "bundle.json", "--summary": "pr.md", "--trace": "trace.jsonl"}

// plantingTest is a test file whose TestMain replaces each path in links
// with a symlink to its target before the tests run (every run: the
// harness's baseline, the model's run_test, the validation).
func plantingTest(links map[string]string) string {
	var b strings.Builder
	b.WriteString("package cart\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestMain(m *testing.M) {\n")
	for link, target := range links {
		fmt.Fprintf(&b, "\tos.Remove(%q)\n\tos.Symlink(%q, %q)\n", link, target, link)
	}
	b.WriteString("\tos.Exit(m.Run())\n}\n")
	return b.String()
}

// hostileScene is the demo workspace with the planting test committed, and
// one victim file outside per output.
type hostileScene struct {
	ws      string
	victims map[string]string // output file name → victim path
	args    []string          // the output flags
}

func newHostileScene(t *testing.T, ws, outside string) hostileScene {
	t.Helper()
	s := hostileScene{ws: ws, victims: map[string]string{}}
	links := map[string]string{}
	for flag, name := range outputNames {
		victim := filepath.Join(outside, name+".victim")
		if err := os.WriteFile(victim, []byte("victim of "+name+"\n"), 0o666); err != nil {
			t.Fatal(err)
		}
		s.victims[name] = victim
		links[filepath.Join(ws, name)] = victim
		s.args = append(s.args, flag, filepath.Join(ws, name))
	}
	if err := os.WriteFile(filepath.Join(ws, "plant_test.go"), []byte(plantingTest(links)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"add", "plant_test.go"}, {"-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "hostile test"}} {
		if out, err := exec.Command("git", append([]string{"-C", ws}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return s
}

// check fails the test unless no victim was written, every output path is
// still the planted link, and the run said why for each output.
func (s hostileScene) check(t *testing.T, r runResult) {
	t.Helper()
	for name, victim := range s.victims {
		if data, err := os.ReadFile(victim); err != nil || string(data) != "victim of "+name+"\n" {
			t.Errorf("%s: the file outside was written through the link: %q, %v", name, data, err)
		}
		p := filepath.Join(s.ws, name)
		if fi, err := os.Lstat(p); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s: the planted link is gone: %v", name, err)
		}
	}
	if r.code == 0 {
		t.Errorf("exit 0 though no output was written\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	for _, want := range []string{
		filepath.Join(s.ws, "bundle.json") + " is a symbolic link: mini-agent does not write through links",
		filepath.Join(s.ws, "pr.md") + " is a symbolic link: mini-agent does not write through links",
		filepath.Join(s.ws, "trace.jsonl") + " was replaced while mini-agent wrote it (by a symbolic link)",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, r.stderr)
		}
	}
	// The run itself went as it would have: the fix is validated.
	if !strings.Contains(r.stdout, "fix validated by the harness") {
		t.Errorf("the run did not fix:\n%s", r.stdout)
	}
}

func TestOutputsAreNeverWrittenThroughPlantedLinks(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	s := newHostileScene(t, workspace(t), t.TempDir())
	script := writeScript(t, demo.Trajectory)
	r := runBinary(t, context.Background(), nil,
		append([]string{"fix", "--workdir", s.ws, "--test-command", "go test ./...", "--provider", "script", "--script", script}, s.args...)...)
	if r.code != 1 {
		t.Errorf("exit %d, want 1 (fixed, but the outputs are missing)", r.code)
	}
	s.check(t, r)
}

// Links already there when the run starts (planted by an earlier step) are
// refused before anything runs.
func TestOutputLinksPlantedBeforeTheRunAreRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	ws, outside := workspace(t), t.TempDir()
	for flag, name := range outputNames {
		t.Run(name, func(t *testing.T) {
			victim := filepath.Join(outside, name)
			if err := os.WriteFile(victim, []byte("victim\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			link := filepath.Join(ws, name)
			if err := os.Symlink(victim, link); err != nil {
				t.Fatal(err)
			}
			r := runBinary(t, context.Background(), nil, "fix", "--workdir", ws, "--test-command", "go test ./...",
				"--provider", "script", "--script", "testdata/nofix.jsonl", flag, link)
			if data, _ := os.ReadFile(victim); string(data) != "victim\n" {
				t.Errorf("the file outside was written: %q", data)
			}
			if want := flag + " " + link + " is a symbolic link: mini-agent does not write through links"; r.code != 2 || !strings.Contains(r.stderr, want) {
				t.Errorf("exit %d, want 2 saying %q:\n%s", r.code, want, r.stderr)
			}
		})
	}
}

// nobody is the unprivileged user the hosted runners' jobs are like.
const nobody = 65534

// The same attack with the whole binary running unprivileged, as on a CI
// runner: the victims are the user's own files (writable by it), so only
// mini-agent's refusal keeps them.
func TestOutputsAreNeverWrittenThroughPlantedLinksUnprivileged(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	if os.Getuid() != 0 {
		t.Skip("needs root to run the binary as another user (unprivileged, TestOutputsAreNeverWrittenThroughPlantedLinks is this test)")
	}
	t.Parallel()
	// A tree the unprivileged user can reach: t.TempDir's parent is 0700.
	base, err := os.MkdirTemp("", "mini-agent-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	dirs := map[string]string{}
	for _, d := range []string{"bin", "ws", "outside", "home", "gocache", "gopath", "tmp"} {
		dirs[d] = filepath.Join(base, d)
		if err := os.Mkdir(dirs[d], 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dirs["bin"], "mini-agent")
	copyFile(t, binary, bin, 0o755)
	script := filepath.Join(dirs["bin"], "script.jsonl")
	if err := os.WriteFile(script, demo.Trajectory, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := demo.Materialize(t.Context(), dirs["ws"]); err != nil {
		t.Fatal(err)
	}
	s := newHostileScene(t, dirs["ws"], dirs["outside"])
	// Everything the run writes, and the victims, belong to the user.
	for _, d := range []string{"ws", "outside", "home", "gocache", "gopath", "tmp"} {
		chownTree(t, dirs[d], nobody)
	}
	cmd := exec.CommandContext(t.Context(), bin, append([]string{"fix", "--workdir", s.ws, "--test-command", "go test ./...",
		"--provider", "script", "--script", script}, s.args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dirs["home"], "TMPDIR=" + dirs["tmp"],
		"GOCACHE=" + dirs["gocache"], "GOPATH=" + dirs["gopath"], "GOTOOLCHAIN=local", "GOFLAGS=-buildvcs=false", "GOPROXY=off"}
	cmd.Dir = dirs["tmp"]
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody, Groups: []uint32{}}}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	r := runResult{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run: %v", err)
	}
	s.check(t, r)
	// The hostile code ran as the user: its links are the user's.
	if fi, err := os.Lstat(filepath.Join(s.ws, "pr.md")); err == nil && fi.Sys().(*syscall.Stat_t).Uid != nobody {
		t.Errorf("the test code did not run as uid %d", nobody)
	}
}

func copyFile(t *testing.T, src, dst string, perm os.FileMode) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	o, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(o, in); err != nil {
		t.Fatal(err)
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
}

func chownTree(t *testing.T, dir string, uid int) {
	t.Helper()
	err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, uid)
	})
	if err != nil {
		t.Fatalf("chown %s to %s: %v", dir, strconv.Itoa(uid), err)
	}
}
