//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/org/mini-agent/internal/demo"
	"github.com/org/mini-agent/internal/sandbox/sandboxtest"
)

// attackTest is test code a model could write, or a hostile repository
// holds, run by every test run (the baseline, the model's run_test, the
// validation): it tries the attacks of issue 21 against a machine laid out
// like a GitHub-hosted runner and appends one line per attack to
// $TMPDIR/mini-agent-attacks.log: "NAME WORKED|blocked detail".
const attackTest = `package cart

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	attack()
	os.Exit(m.Run())
}

func attack() {
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "mini-agent-attacks.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o666)
	if err != nil {
		return
	}
	defer f.Close()
	say := func(name string, worked bool, detail string) {
		w := "blocked"
		if worked {
			w = "WORKED"
		}
		fmt.Fprintf(f, "%%s %%s %%s\n", name, w, strings.Join(strings.Fields(detail), " "))
	}
	c := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", %[1]q)
	}}}
	if resp, err := c.Get("http://docker/_ping"); err != nil {
		say("docker", false, err.Error())
	} else {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		say("docker", string(b) == "OK", string(b))
	}
	if conn, err := net.DialTimeout("tcp", %[2]q, 3*time.Second); err != nil {
		say("network", false, err.Error())
	} else {
		conn.SetDeadline(time.Now().Add(3 * time.Second))
		b := make([]byte, 100)
		n, _ := conn.Read(b)
		conn.Close()
		say("network", strings.HasPrefix(string(b[:n]), "reached"), string(b[:n]))
	}
	out, err := exec.Command("sudo", "-n", "id", "-u").CombinedOutput()
	say("sudo", err == nil && strings.TrimSpace(string(out)) == "0", string(out))
	data, err := os.ReadFile(%[3]q)
	say("credential", err == nil && strings.Contains(string(data), "extraheader"), fmt.Sprint(err))
	if ef, err := os.OpenFile(%[4]q, os.O_APPEND|os.O_WRONLY, 0); err != nil {
		say("runner-env-file", false, err.Error())
	} else {
		_, err = ef.WriteString("GOFLAGS=-toolexec=/tmp/x\n")
		ef.Close()
		say("runner-env-file", err == nil, fmt.Sprint(err))
	}
}
`

// attackNames are the attacks attackTest makes.
var attackNames = []string{"docker", "network", "sudo", "credential", "runner-env-file"}

// The whole binary runs as the runner user of a hosted-runner layout (in
// the daemon socket's group, with passwordless sudo, a token persisted in
// .git/config, RUNNER_TEMP's file-command files): the fix is still made
// and validated, every attack of the test code fails in every run, the PR
// body's isolation line says what held, and the persisted token reaches
// none of the outputs. The control: the same run with --no-sandbox, where
// every attack works.
func TestHostedRunnerAttacksFailAndTheFixStillValidates(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	r := sandboxtest.NewRunner(t, true)
	srv := sandboxtest.NewNetServer(t)
	bin := filepath.Join(r.Mkdir(t, "mini-agent-bin"), "mini-agent")
	copyFile(t, binary, bin, 0o755)
	token := "ghs_" + "HOSTEDcanary0123456789abcdefABCDEFghi"[:36]
	b64 := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + token))

	run := func(name string, extra ...string) (runResult, string, string) {
		base := r.Mkdir(t, name)
		dirs := map[string]string{}
		for _, d := range []string{"ws", "home", "gocache", "gopath", "tmp", "out"} {
			dirs[d] = r.Mkdir(t, filepath.Join(name, d))
		}
		ws := dirs["ws"]
		if err := demo.Materialize(t.Context(), ws); err != nil {
			t.Fatal(err)
		}
		test := fmt.Sprintf(attackTest, r.Socket, srv.Addr, filepath.Join(ws, ".git", "config"), r.EnvFile)
		if err := os.WriteFile(filepath.Join(ws, "attack_test.go"), []byte(test), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"add", "attack_test.go"}, {"-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "attack"},
			{"config", "http.https://github.com/.extraheader", "AUTHORIZATION: basic " + b64}} {
			if out, err := exec.Command("git", append([]string{"-c", "safe.directory=*", "-C", ws}, args...)...).CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
		chownTreeTo(t, base, r.UID, r.GID)
		script := filepath.Join(dirs["out"], "script.jsonl")
		if err := os.WriteFile(script, demo.Trajectory, 0o644); err != nil {
			t.Fatal(err)
		}
		out := dirs["out"]
		args := append([]string{"fix", "--workdir", ws, "--test-command", "go test ./...", "--provider", "script", "--script", script,
			"--summary", filepath.Join(out, "pr.md"), "--bundle", filepath.Join(out, "bundle.json"), "--trace", filepath.Join(out, "trace.jsonl")}, extra...)
		env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dirs["home"], "TMPDIR=" + dirs["tmp"], "GOCACHE=" + dirs["gocache"],
			"GOPATH=" + dirs["gopath"], "GOTOOLCHAIN=local", "GOFLAGS=-buildvcs=false", "GOPROXY=off",
			"GITHUB_TOKEN=" + canaryGitHub, "RUNNER_TEMP=" + r.RunnerTemp, "GITHUB_ENV=" + r.EnvFile}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
		defer cancel()
		cmd := r.CommandOf(ctx, env, bin, args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		res := runResult{}
		if err := cmd.Run(); err != nil {
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("run: %v", err)
			}
			res.code = ee.ExitCode()
		}
		res.stdout, res.stderr = stdout.String(), stderr.String()
		log, _ := os.ReadFile(filepath.Join(dirs["tmp"], "mini-agent-attacks.log"))
		return res, string(log), out
	}

	// The control: without the sandbox every attack works.
	res, log, _ := run("control", "--no-sandbox")
	for _, a := range attackNames {
		if !strings.Contains(log, a+" WORKED") {
			t.Fatalf("control: %s did not work without the sandbox:\n%s\nexit %d\nstdout:\n%s\nstderr:\n%s", a, log, res.code, res.stdout, res.stderr)
		}
	}
	os.WriteFile(r.EnvFile, nil, 0o644)

	var out string
	res, log, out = run("sandboxed")
	if res.code != 0 {
		t.Fatalf("exit %d, want 0 (fixed)\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	for _, a := range attackNames {
		if !strings.Contains(log, a+" blocked") {
			t.Errorf("%s: the attack did not run in the sandbox:\n%s", a, log)
		}
	}
	if strings.Contains(log, "WORKED") {
		t.Errorf("an attack worked in the sandbox:\n%s", log)
	}
	if data, _ := os.ReadFile(r.EnvFile); len(data) != 0 {
		t.Errorf("the runner's env file was written: %q", data)
	}
	pr, err := os.ReadFile(filepath.Join(out, "pr.md"))
	if err != nil {
		t.Fatal(err)
	}
	var line string
	for _, l := range strings.Split(string(pr), "\n") {
		if strings.HasPrefix(l, "Test command isolation: ") {
			line = l
		}
	}
	for _, want := range []string{"network: loopback only (via sudo)", fmt.Sprintf("runs as uid %d without supplementary groups (via sudo)", r.UID),
		"no new privileges (no sudo)", "persisted credentials hidden (1 files)", "landlock ABI"} {
		if !strings.Contains(line, want) {
			t.Errorf("the PR body's isolation line lacks %q: %q", want, line)
		}
	}
	b := readBundle(t, filepath.Join(out, "bundle.json"))
	if w := strings.Join(b.Warnings, "\n"); !strings.Contains(w, "the sandbox hid it from code under test") {
		t.Errorf("warnings do not say the credential was hidden: %q", b.Warnings)
	}
	for _, f := range []string{"pr.md", "bundle.json", "trace.jsonl"} {
		data, _ := os.ReadFile(filepath.Join(out, f))
		for _, secret := range []string{token, b64, canaryGitHub} {
			if strings.Contains(string(data), secret) {
				t.Errorf("a secret reached %s", f)
			}
		}
	}
	for _, secret := range []string{token, b64, canaryGitHub} {
		if strings.Contains(res.stdout+res.stderr, secret) {
			t.Errorf("a secret reached the log")
		}
	}
}

func chownTreeTo(t *testing.T, dir string, uid, gid int) {
	t.Helper()
	err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
	if err != nil {
		t.Fatal(err)
	}
}
