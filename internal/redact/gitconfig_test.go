package redact

import (
	"context"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// git runs the real git in dir, with no global or system configuration.
func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func newRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "--template=")
	return dir
}

// checkoutToken is a token of actions/checkout's that is not in the
// environment: only the config knows it.
var checkoutToken = "ghs_" + "CHECKOUTcanary0123456789abcdefABCDEF"

func checkoutHeader(token string) (header, b64 string) {
	b64 = base64.StdEncoding.EncodeToString([]byte("x-access-token:" + token))
	return "AUTHORIZATION: basic " + b64, b64
}

func appendFile(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

func readCreds(t *testing.T, dir string) []Credential {
	t.Helper()
	creds, err := FromGitConfig(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return creds
}

func allValues(creds []Credential) []string {
	var out []string
	for _, c := range creds {
		out = append(out, c.Values...)
	}
	return out
}

// actions/checkout before v6 (and v6 with an older runner): the header in
// .git/config. Every form test code could print is a value: the header,
// its value, the base64, the decoded text, the token; the user name is
// not.
func TestGitConfigExtraHeader(t *testing.T) {
	t.Parallel()
	dir := newRepo(t)
	header, b64 := checkoutHeader(checkoutToken)
	git(t, dir, "config", "http.https://github.com/.extraheader", header)
	git(t, dir, "config", "user.name", "not a credential at all")
	creds := readCreds(t, dir)
	if len(creds) != 1 || creds[0].Key != "http.https://github.com/.extraheader" || creds[0].File != filepath.Join(dir, ".git", "config") {
		t.Fatalf("creds %+v", creds)
	}
	got := creds[0].Values
	for _, want := range []string{header, "basic " + b64, b64, "x-access-token:" + checkoutToken, checkoutToken} {
		if !slices.Contains(got, want) {
			t.Errorf("values %q lack %q", got, want)
		}
	}
	if slices.Contains(got, "x-access-token") {
		t.Errorf("the user name x-access-token is a value: %q", got)
	}
	r := New(got)
	for _, printed := range []string{header, b64, checkoutToken, "x-access-token:" + checkoutToken} {
		if out := r("cat .git/config: " + printed); strings.Contains(out, checkoutToken[4:20]) || strings.Contains(out, b64[8:30]) {
			t.Errorf("not redacted: %q", out)
		}
	}
}

// Credentials in URLs: a remote's, an insteadOf rewrite's key (the token
// in the subsection), a percent-encoded password, a token as the user.
func TestGitConfigURLUserInfo(t *testing.T) {
	t.Parallel()
	dir := newRepo(t)
	pat := "ghp_" + "URLcanary0123456789abcdefABCDEFGHIJK"
	git(t, dir, "remote", "add", "origin", "https://x-access-token:"+checkoutToken+"@github.com/o/r")
	git(t, dir, "config", "url.https://"+pat+"@github.com/.insteadOf", "https://github.com/")
	git(t, dir, "config", "remote.mirror.url", "https://deploy:p%40ss-word-2024@git.example.com/r.git")
	git(t, dir, "config", "remote.ssh.url", "ssh://git@github.com/o/r")
	creds := readCreds(t, dir)
	var keys []string
	for _, c := range creds {
		keys = append(keys, c.Key)
	}
	slices.Sort(keys)
	if want := []string{"remote.mirror.url", "remote.origin.url", "url.https://" + pat + "@github.com/.insteadof"}; !slices.Equal(keys, want) {
		t.Fatalf("keys %q, want %q", keys, want)
	}
	got := allValues(creds)
	for _, want := range []string{checkoutToken, "x-access-token:" + checkoutToken, pat, "p%40ss-word-2024", "p@ss-word-2024"} {
		if !slices.Contains(got, want) {
			t.Errorf("values %q lack %q", got, want)
		}
	}
	for _, not := range []string{"x-access-token", "deploy", "git"} {
		if slices.Contains(got, not) {
			t.Errorf("%q is a value", not)
		}
	}
}

// actions/checkout v6: the header lives in $RUNNER_TEMP/git-credentials-
// <uuid>.config, which .git/config includes with includeIf.gitdir:…; a
// relative include.path is the including file's neighbour; an include
// cycle ends.
func TestGitConfigFollowsIncludes(t *testing.T) {
	t.Parallel()
	dir := newRepo(t)
	temp := t.TempDir()
	credFile := filepath.Join(temp, "git-credentials-0a1b2c3d.config")
	header, _ := checkoutHeader(checkoutToken)
	git(t, temp, "config", "--file", credFile, "http.https://github.com/.extraheader", header)
	gitDir := filepath.Join(dir, ".git")
	git(t, dir, "config", "includeIf.gitdir:"+gitDir+".path", credFile)
	git(t, dir, "config", "includeIf.gitdir:/github/workspace/.git.path", "/github/runner_temp/git-credentials-0a1b2c3d.config") // missing: skipped
	other := "ghp_" + "INCLUDEcanary0123456789abcdefABCDEFGH"
	if err := os.WriteFile(filepath.Join(gitDir, "more.config"), []byte("[include]\n\tpath = more.config\n[remote \"x\"]\n\turl = https://"+other+"@github.com/o/r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	appendFile(t, filepath.Join(gitDir, "config"), "[include]\n\tpath = more.config\n") // git itself refuses the cycle
	creds := readCreds(t, dir)
	files := map[string]string{}
	for _, c := range creds {
		files[c.Key] = c.File
	}
	if files["http.https://github.com/.extraheader"] != credFile || files["remote.x.url"] != filepath.Join(gitDir, "more.config") {
		t.Fatalf("creds %+v", creds)
	}
	if got := allValues(creds); !slices.Contains(got, checkoutToken) || !slices.Contains(got, other) {
		t.Fatalf("values %q", got)
	}
}

// A linked worktree's config is its common directory's.
func TestGitConfigOfALinkedWorktree(t *testing.T) {
	t.Parallel()
	dir := newRepo(t)
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "c")
	header, _ := checkoutHeader(checkoutToken)
	git(t, dir, "config", "http.https://github.com/.extraheader", header)
	wt := filepath.Join(t.TempDir(), "wt")
	git(t, dir, "worktree", "add", "-q", wt)
	if got := allValues(readCreds(t, wt)); !slices.Contains(got, checkoutToken) {
		t.Fatalf("values %q", got)
	}
}

func TestGitConfigWithoutRepositoryOrCredential(t *testing.T) {
	t.Parallel()
	if creds, err := FromGitConfig(context.Background(), t.TempDir()); err != nil || len(creds) != 0 {
		t.Fatalf("no repository: %v %v", creds, err)
	}
	dir := newRepo(t)
	git(t, dir, "config", "remote.origin.url", "https://github.com/o/r")
	git(t, dir, "config", "http.https://example.com/.extraheader", "X-Trace: 1")
	if creds := readCreds(t, dir); len(creds) != 0 {
		t.Fatalf("creds %+v", creds)
	}
}

// An include that is a FIFO does not stall the reader, a config git
// cannot parse is an error, and what the other files hold is still
// returned.
func TestGitConfigHostileFiles(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("no FIFOs")
	}
	dir := newRepo(t)
	header, _ := checkoutHeader(checkoutToken)
	git(t, dir, "config", "http.https://github.com/.extraheader", header)
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(t.TempDir(), "broken.config")
	if err := os.WriteFile(broken, []byte("[unclosed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Written directly: git itself would block on the FIFO.
	appendFile(t, filepath.Join(dir, ".git", "config"), "[include]\n\tpath = "+fifo+"\n\tpath = "+broken+"\n")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	creds, err := FromGitConfig(ctx, dir)
	if err == nil || !strings.Contains(err.Error(), fifo) || !strings.Contains(err.Error(), broken) {
		t.Fatalf("err %v", err)
	}
	if !slices.Contains(allValues(creds), checkoutToken) {
		t.Fatalf("creds %+v", creds)
	}
}

// The masked copy of each file keeps everything but the credentials: the
// extra header gone, the remote's URL without its user info, an included
// file's header gone too, other settings as they were.
func TestMaskedConfigsKeepAllButTheCredentials(t *testing.T) {
	t.Parallel()
	dir := newRepo(t)
	token := "ghs_" + "MASKEDcanary0123456789abcdefABCDEFghij"[:36]
	header := "AUTHORIZATION: basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+token))
	inc := filepath.Join(t.TempDir(), "git-credentials-1.config")
	if err := os.WriteFile(inc, []byte("[http \"https://github.com/\"]\n\textraheader = "+header+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, kv := range [][]string{
		{"http.https://github.com/.extraheader", header},
		{"remote.origin.url", "https://x-access-token:" + token + "@github.com/o/r"},
		{"url.https://" + token + "@github.com/.insteadOf", "https://github.com/"},
		{"core.autocrlf", "false"},
		{"includeIf.gitdir:" + dir + "/.path", inc},
	} {
		git(t, dir, "config", kv[0], kv[1])
	}
	creds, err := FromGitConfig(context.Background(), dir)
	if err != nil || len(creds) < 4 {
		t.Fatalf("FromGitConfig = %v, %v", creds, err)
	}
	masked, err := Masked(context.Background(), creds)
	if err != nil {
		t.Fatal(err)
	}
	cfg := masked[filepath.Join(dir, ".git", "config")]
	for _, gone := range []string{token, "extraheader", "basic", "x-access-token"} {
		if strings.Contains(cfg, gone) {
			t.Errorf("the masked config still holds %q:\n%s", gone, cfg)
		}
	}
	for _, kept := range []string{"url = https://github.com/o/r", "autocrlf = false", "path = " + inc} {
		if !strings.Contains(cfg, kept) {
			t.Errorf("the masked config lost %q:\n%s", kept, cfg)
		}
	}
	if incMasked, ok := masked[inc]; !ok || strings.Contains(incMasked, token) || strings.Contains(incMasked, "basic") {
		t.Errorf("the included file's mask: %q (present %t)", incMasked, ok)
	}
	// The files themselves are untouched.
	if data, _ := os.ReadFile(inc); !strings.Contains(string(data), header) {
		t.Errorf("the included file changed: %q", data)
	}
}
