//go:build linux

package gitexec

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const canaryToken = "ghs_GITEXECcanary0123456789abcdefXYZ"

func plainGit(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func secretsSet(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", canaryToken)
	t.Setenv("OPENAI_API_KEY", canaryToken+"1")
	t.Setenv("ANTHROPIC_API_KEY", canaryToken+"2")
	t.Setenv("DEPLOY_PASS", canaryToken+"3") // no secret-looking name: only an allow-list drops it
	t.Setenv("GIT_DIR", "/elsewhere")
	t.Setenv("GIT_CONFIG_PARAMETERS", "'core.fsmonitor'='touch /tmp/x'")
}

// The environment a git child gets holds no secret and nothing inherited
// that could redirect or reconfigure git: only the allow-list.
func TestEnvIsAllowListed(t *testing.T) {
	secretsSet(t)
	env := Env([]string{"GIT_INDEX_FILE=/tmp/i"})
	joined := strings.Join(env, "\n")
	if strings.Contains(joined, canaryToken) || strings.Contains(joined, "GIT_DIR=") || strings.Contains(joined, "GIT_CONFIG_PARAMETERS") {
		t.Fatalf("env leaks:\n%s", joined)
	}
	for _, want := range []string{"GIT_CONFIG_GLOBAL=" + os.DevNull, "GIT_CONFIG_NOSYSTEM=1", "GIT_NO_REPLACE_OBJECTS=1", "GIT_INDEX_FILE=/tmp/i", "LC_ALL=C"} {
		if !strings.Contains(joined, want) {
			t.Errorf("env lacks %s", want)
		}
	}
	for _, kv := range env {
		name, val, _ := strings.Cut(kv, "=")
		if name == "PATH" && strings.Contains(val, os.Getenv("HOME")) && os.Getenv("HOME") != "" {
			t.Errorf("PATH keeps a home directory: %s", val)
		}
	}
	if _, err := Run(context.Background(), Options{Env: []string{"HOME=/x"}}, "version"); err == nil {
		t.Error("a non-GIT_ extra variable was accepted")
	}
}

// A real git child's /proc/PID/environ (what a process left behind by test
// code can read) holds none of the harness's secrets.
func TestRealGitChildEnvironHasNoSecret(t *testing.T) {
	dir := t.TempDir()
	// Before secretsSet: its GIT_DIR would send this plain git's init
	// elsewhere, and git cat-file below would then exit at once (not a
	// repository) before its environ could be read.
	plainGit(t, dir, "init", "-q")
	secretsSet(t)
	// A real pipe: git blocks reading it until it is closed below.
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	var stderr bytes.Buffer
	cmd, cancel, err := Command(context.Background(), Options{Dir: dir, Stdin: pr}, "cat-file", "--batch-check")
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var environ []byte
	// Until git has exec'd (it then waits on stdin): a generous bound, not
	// a timing claim; a loaded machine can take seconds to start it.
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && len(environ) == 0; {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/environ")
		if err == nil && bytes.Contains(data, []byte("GIT_CONFIG_NOSYSTEM")) {
			environ = data
		}
		time.Sleep(10 * time.Millisecond)
	}
	pw.Close()
	cmd.Wait()
	if len(environ) == 0 {
		t.Fatalf("could not read the git child's environ (git: %s %q)", cmd.ProcessState, stderr.String())
	}
	if bytes.Contains(environ, []byte(canaryToken)) || bytes.Contains(environ, []byte("GIT_DIR=")) {
		t.Fatalf("git child's environ leaks: %q", environ)
	}
}

// Resolved once: a git planted earlier on PATH afterwards is never run.
func TestGitIsResolvedOnce(t *testing.T) {
	if err := Init(); err != nil {
		t.Fatal(err)
	}
	before, _ := Path()
	if !filepath.IsAbs(before) {
		t.Fatalf("path %q is not absolute", before)
	}
	bin := t.TempDir()
	canary := filepath.Join(t.TempDir(), "ran")
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte("#!/bin/sh\ntouch "+canary+"\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	if after, _ := Path(); after != before {
		t.Fatalf("git re-resolved: %s, then %s", before, after)
	}
	if _, err := Run(context.Background(), Options{Dir: t.TempDir()}, "version"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(canary); err == nil {
		t.Fatal("the planted git ran")
	}
}

// Hooks and an fsmonitor the repository configures never run.
func TestRepositoryProgramsNeverRun(t *testing.T) {
	dir := t.TempDir()
	canary := filepath.Join(t.TempDir(), "ran")
	plainGit(t, dir, "init", "-q")
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644)
	plainGit(t, dir, "config", "core.fsmonitor", "touch "+canary+"; false")
	hooks := filepath.Join(dir, "myhooks")
	os.MkdirAll(hooks, 0o755)
	for _, h := range []string{"pre-commit", "post-commit", "post-index-change"} {
		os.WriteFile(filepath.Join(hooks, h), []byte("#!/bin/sh\ntouch "+canary+"\n"), 0o755)
		os.WriteFile(filepath.Join(dir, ".git", "hooks", h), []byte("#!/bin/sh\ntouch "+canary+"\n"), 0o755)
	}
	plainGit(t, dir, "config", "core.hooksPath", hooks)
	opt := Options{Dir: dir, Env: []string{"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e"}}
	for _, args := range [][]string{{"status"}, {"add", "a.txt"}, {"commit", "-qm", "x"}, {"ls-files", "-o"}} {
		if _, err := Run(context.Background(), opt, args...); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(canary); err == nil {
		t.Fatal("a hook or the fsmonitor ran")
	}
}

// A git that blocks (a FIFO where it reads) is killed at its deadline.
func TestDeadlineKillsABlockedGit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plainGit(t, dir, "init", "-q")
	if err := syscall.Mkfifo(filepath.Join(dir, ".gitignore"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if f, err := os.OpenFile(filepath.Join(dir, ".gitignore"), os.O_RDWR, 0); err == nil {
			f.Close()
		}
	})
	t0 := time.Now()
	_, err := Run(context.Background(), Options{Dir: dir, Timeout: time.Second}, "ls-files", "-o", "--exclude-standard")
	if err == nil || !strings.Contains(err.Error(), "deadline") {
		t.Fatalf("err %v, want a deadline error", err)
	}
	if d := time.Since(t0); d > 6*time.Second {
		t.Fatalf("returned after %v", d)
	}
	if err := CheckRepoInputs(dir); err != nil {
		t.Fatalf("CheckRepoInputs on a sound .git: %v", err)
	}
	os.Remove(filepath.Join(dir, ".git", "index"))
	syscall.Mkfifo(filepath.Join(dir, ".git", "index"), 0o644)
	if err := CheckRepoInputs(dir); err == nil {
		t.Fatal("CheckRepoInputs accepted a FIFO index")
	}
}
