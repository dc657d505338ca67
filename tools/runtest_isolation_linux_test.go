//go:build linux

package tools

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/org/mini-agent/internal/sandbox"
	"github.com/org/mini-agent/internal/sandbox/sandboxtest"
	"github.com/org/mini-agent/internal/testcmd"
)

// gitIn runs git in dir with no global or system configuration.
func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// The workspace's config persists actions/checkout's token; test code
// that prints .git/config sees it without the sandbox (the control) and
// not with it, and the config it sees still works for git.
func TestRunTestHidesPersistedCredentials(t *testing.T) {
	t.Parallel()
	requireLandlock(t)
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q", "--template=")
	token := "ghs_" + "RUNTESTcanary0123456789abcdefABCDEFgh"[:36]
	b64 := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + token))
	gitIn(t, dir, "config", "http.https://github.com/.extraheader", "AUTHORIZATION: basic "+b64)
	gitIn(t, dir, "remote", "add", "origin", "https://x-access-token:"+token+"@github.com/o/r")
	run := func(noSandbox bool) RunOutcome {
		ws := openWS(t, dir)
		rt := NewRunTest(ws, RunTestConfig{Command: mustParse(t, "sh -c 'cat .git/config; git config --get remote.origin.url'"), NoSandbox: noSandbox})
		out, err := rt.Run(t.Context(), testcmd.Selection{}, testcmd.Plain)
		if err != nil {
			t.Fatal(err)
		}
		if got := rt.CredentialsHidden(); got == noSandbox {
			t.Errorf("noSandbox=%t: CredentialsHidden = %t", noSandbox, got)
		}
		return out
	}
	if out := run(true); !strings.Contains(out.Output, b64) || !strings.Contains(out.Output, token) {
		t.Fatalf("control: without the sandbox test code should read the credential:\n%s", out.Text())
	}
	out := run(false)
	if strings.Contains(out.Output, b64) || strings.Contains(out.Output, token) || strings.Contains(out.Output, "extraheader") {
		t.Fatalf("test code read the persisted credential:\n%s", out.Text())
	}
	if !strings.Contains(out.Output, "https://github.com/o/r") || out.ExitCode != 0 {
		t.Errorf("the masked config lost the remote:\n%s", out.Text())
	}
	if !strings.Contains(out.Protections, "persisted credentials hidden (1 files)") {
		t.Errorf("protections %q", out.Protections)
	}
	// The workspace's own config is as it was.
	if data, _ := os.ReadFile(filepath.Join(dir, ".git", "config")); !strings.Contains(string(data), b64) {
		t.Errorf(".git/config changed: %s", data)
	}
}

// Test code sees loopback only by default: a server on a non-loopback
// address (in a network namespace of the test's own) is out of reach, and
// in reach with the network opened; the protections line says which.
func TestRunTestNetworkIsLoopbackOnlyByDefault(t *testing.T) {
	t.Parallel()
	srv := sandboxtest.NewNetServer(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	run := func(noSandbox bool, a sandbox.Access) RunOutcome {
		ws := openWS(t, t.TempDir())
		rt := NewRunTest(ws, RunTestConfig{Command: mustParse(t, self+" root dial "+srv.Addr), NoSandbox: noSandbox, Access: a,
			Env: append(os.Environ(), hostileEnv+"=1"), EnvAllow: []string{hostileEnv}})
		out, err := rt.Run(t.Context(), testcmd.Selection{}, testcmd.Plain)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if out := run(true, sandbox.Access{}); !strings.Contains(out.Output, srv.Token) {
		t.Fatalf("control: without the sandbox the server is reachable:\n%s", out.Text())
	}
	out := run(false, sandbox.Access{})
	if strings.Contains(out.Output, srv.Token) || !strings.Contains(out.Output, "network is unreachable") {
		t.Fatalf("test code reached a non-loopback address:\n%s", out.Text())
	}
	if !strings.Contains(out.Protections, "network: loopback only") {
		t.Errorf("protections %q", out.Protections)
	}
	out = run(false, sandbox.Access{Network: sandbox.NetworkOpen})
	if !strings.Contains(out.Output, srv.Token) || !strings.Contains(out.Protections, "network: open: --test-network open") {
		t.Fatalf("with the network opened the server is not reached:\n%s", out.Text())
	}
}

// proxyModule is one module version a test's module proxy serves.
type proxyModule struct {
	path, version, goMod string
	files                map[string]string // zip entries below path@version/
}

// moduleProxy serves modules by the GOPROXY protocol on loopback: the
// harness reaches it, test code in its own network namespace does not.
func moduleProxy(t *testing.T, mods ...proxyModule) string {
	files := proxyFiles(t, mods...)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := files[strings.TrimPrefix(r.URL.Path, "/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// proxyFiles are the files of a GOPROXY serving mods, by slash path.
func proxyFiles(t *testing.T, mods ...proxyModule) map[string][]byte {
	files := map[string][]byte{}
	for _, m := range mods {
		var zbuf bytes.Buffer
		zw := zip.NewWriter(&zbuf)
		for name, body := range m.files {
			w, err := zw.Create(m.path + "@" + m.version + "/" + name)
			if err != nil {
				t.Fatal(err)
			}
			w.Write([]byte(body))
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		base := m.path + "/@v/"
		files[base+"list"] = []byte(m.version + "\n")
		files[base+m.version+".info"] = []byte(`{"Version":"` + m.version + `","Time":"2024-01-01T00:00:00Z"}`)
		files[base+m.version+".mod"] = []byte(m.goMod)
		files[base+m.version+".zip"] = zbuf.Bytes()
	}
	return files
}

// goModule writes a module with files into a new committed repository.
func goModule(t *testing.T, files map[string]string) string {
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitIn(t, dir, "init", "-q", "--template=")
	gitIn(t, dir, "add", ".")
	gitIn(t, dir, "commit", "-q", "-m", "m")
	return dir
}

// A Go module whose dependency is not in the module cache: the harness
// downloads it before the first run without network, so `go test` passes
// there; without that download (the control) the run fails for lack of
// network.
func TestRunTestDownloadsModulesBeforeTheRunWithoutNetwork(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	requireLandlock(t)
	proxy := moduleProxy(t, proxyModule{path: "example.com/dep", version: "v1.0.0", goMod: "module example.com/dep\n\ngo 1.21\n",
		files: map[string]string{"go.mod": "module example.com/dep\n\ngo 1.21\n", "dep.go": "package dep\n\nfunc Two() int { return 2 }\n"}})
	run := func(prefetch bool) RunOutcome {
		dir := goModule(t, map[string]string{
			"go.mod":    "module example.com/m\n\ngo 1.21\n\nrequire example.com/dep v1.0.0\n",
			"m.go":      "package m\n\nimport \"example.com/dep\"\n\nfunc F() int { return dep.Two() }\n",
			"m_test.go": "package m\n\nimport \"testing\"\n\nfunc TestF(t *testing.T) {\n\tif F() != 2 {\n\t\tt.Fatal(F())\n\t}\n}\n",
		})
		// A module cache of the test's own (writable, so the test's
		// cleanup removes it): the dependency is not in it.
		env := append(os.Environ(), "GOPROXY="+proxy, "GOSUMDB=off", "GOFLAGS=-mod=mod -modcacherw", "GOTOOLCHAIN=local",
			"GOMODCACHE="+filepath.Join(t.TempDir(), "mod"))
		rt := NewRunTest(openWS(t, dir), RunTestConfig{Command: mustParse(t, "go test ./..."), Env: env, PrefetchModules: prefetch})
		out, err := rt.Run(t.Context(), testcmd.Selection{}, testcmd.Plain)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if out := run(false); out.ExitCode == 0 || !strings.Contains(out.Output, "example.com/dep") {
		t.Fatalf("control: without the download the run should fail for lack of network:\n%s", out.Text())
	}
	if out := run(true); out.ExitCode != 0 || !strings.Contains(out.Protections, "network: loopback only") {
		t.Fatalf("with the download the run should pass without network:\n%s", out.Text())
	}
}

// Test code replaces its run's saved log with a link to a file of the
// harness's: the harness does not read the file back as the run's output.
func TestRunTestSavedLogSwappedForALink(t *testing.T) {
	t.Parallel()
	requireLandlock(t)
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("HARNESS-ONLY-SECRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The runs dir where mini-agent keeps it, in the temp dir, and named
	// to the test code: the logs of other tests' runs, in parallel, are
	// in the temp dir too.
	runs, err := os.MkdirTemp("", "mini-agent-runs-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(runs) })
	ws, err := OpenWorkspace(t.TempDir(), WorkspaceOptions{RunsDir: runs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	rt := NewRunTest(ws, RunTestConfig{Command: mustParse(t, self+" root swaplog "+secret+" "+runs),
		Env: append(os.Environ(), hostileEnv+"=1"), EnvAllow: []string{hostileEnv}})
	out, err := rt.Run(context.Background(), testcmd.Selection{}, testcmd.Plain)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.Output, "swapped "+out.LogPath) {
		t.Fatalf("control: the test code did not swap this run's log:\n%s", out.Text())
	}
	data, err := os.ReadFile(out.LogPath)
	if err != nil || strings.Contains(string(data), "HARNESS-ONLY-SECRET") || !strings.Contains(string(data), "swapped") {
		t.Fatalf("the saved log is not the run's output: %q, %v", data, err)
	}
	if fi, err := os.Lstat(out.LogPath); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("the saved log is not a regular file: %v", err)
	}
	if !strings.Contains(strings.Join(out.Notes, "\n"), "test code replaced the saved log during the run") {
		t.Errorf("notes %q", out.Notes)
	}
}

// A go.mod that asks for a Go release newer than the installed one, with
// GOTOOLCHAIN=auto: the harness's download fetches that toolchain (a fake
// one) before the first run, and the run uses it from the module cache.
// The go command fetches toolchains only with the checksum database or
// from a file:// proxy, so the proxy here is a directory whose files test
// code sees emptied (masked): the run gets the toolchain from the module
// cache or not at all. The control: without the download it does not.
func TestRunTestDownloadsTheToolchainBeforeTheRun(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	requireLandlock(t)
	const version = "go1.99.0"
	tc := proxyModule{path: "golang.org/toolchain", version: "v0.0.1-" + version + "." + runtime.GOOS + "-" + runtime.GOARCH,
		goMod: "module golang.org/toolchain\n",
		// What the go command looks at in a toolchain: bin/go, bin/gofmt,
		// pkg/tool and lib (it sets their execute bits on first use).
		files: map[string]string{"bin/go": "#!/bin/sh\necho \"fake toolchain " + version + " ran: $*\"\n",
			"bin/gofmt": "#!/bin/sh\n", "pkg/tool/fake/vet": "#!/bin/sh\n", "lib/fake/README": "fake\n"}}
	proxyDir := t.TempDir()
	var masks []sandbox.Mask
	for name, data := range proxyFiles(t, tc) {
		p := filepath.Join(proxyDir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		masks = append(masks, sandbox.Mask{Target: p})
	}
	run := func(prefetch bool) RunOutcome {
		dir := goModule(t, map[string]string{"go.mod": "module example.com/m\n\ngo 1.99.0\n"})
		env := append(os.Environ(), "GOPROXY=file://"+proxyDir, "GOSUMDB=off", "GOTOOLCHAIN=auto", "GOFLAGS=-modcacherw",
			"GOMODCACHE="+filepath.Join(t.TempDir(), "mod"))
		rt := NewRunTest(openWS(t, dir), RunTestConfig{Command: mustParse(t, "go test ./..."), Env: env, PrefetchModules: prefetch,
			Access: sandbox.Access{Masks: masks}})
		out, err := rt.Run(t.Context(), testcmd.Selection{}, testcmd.Plain)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if out := run(false); out.ExitCode == 0 || strings.Contains(out.Output, "fake toolchain") {
		t.Fatalf("control: without the download the run should not get the toolchain:\n%s", out.Text())
	}
	if out := run(true); out.ExitCode != 0 || !strings.Contains(out.Output, "fake toolchain "+version+" ran: test") {
		t.Fatalf("with the download the run should use the toolchain from the module cache:\n%s", out.Text())
	}
}
