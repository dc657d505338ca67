package actiontest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// installResult is what one run of scripts/install-action.sh left behind.
type installResult struct {
	err            error
	stderr         string
	outputs        map[string]string // GITHUB_OUTPUT
	path           string            // GITHUB_PATH
	binaryOutput   string            // `<path> probe` when a path was output
	binaryRunError error
}

// runInstall runs the install script the way action.yml does, with env on
// top of a scrubbed environment. Without PATH in env, the test's PATH is used.
func runInstall(t *testing.T, env map[string]string) installResult {
	t.Helper()
	tmp := t.TempDir()
	out, ghPath := filepath.Join(tmp, "output"), filepath.Join(tmp, "path")
	for _, f := range []string{out, ghPath} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, _ := hostRunner()
	vars := map[string]string{
		"RUNNER_OS": r.os, "RUNNER_ARCH": r.arch, "RUNNER_TEMP": filepath.Join(tmp, "runner-temp"),
		"GITHUB_OUTPUT": out, "GITHUB_PATH": ghPath,
		"MINI_AGENT_ACTION_REPO": actionRepo,
	}
	for k, v := range env {
		vars[k] = v
	}
	cmd := exec.Command("bash", filepath.Join(repoRoot(t), "scripts", "install-action.sh"))
	cmd.Dir = tmp
	cmd.Env = scrubbedEnv()
	for k, v := range vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	res := installResult{err: cmd.Run(), stderr: stderr.String(), outputs: map[string]string{}}
	data, _ := os.ReadFile(out)
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			res.outputs[k] = v
		}
	}
	data, _ = os.ReadFile(ghPath)
	res.path = strings.TrimSpace(string(data))
	if p := res.outputs["path"]; p != "" {
		b, err := exec.Command(p, "probe").CombinedOutput()
		res.binaryOutput, res.binaryRunError = strings.TrimSpace(string(b)), err
	}
	return res
}

// fakeBinary is a release "binary": a script that names its release.
func fakeBinary(tag string) []byte {
	return []byte("#!/bin/sh\necho \"release " + tag + " $*\"\n")
}

// sourceAction writes a minimal action source tree: a module whose
// cmd/mini-agent prints the version it was built with.
func sourceAction(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/fakeaction\n\ngo 1.22\n",
		"cmd/mini-agent/main.go": "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\nvar version = \"unset\"\n\n" +
			"func main() { fmt.Println(\"source\", version, os.Args[1:]) }\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// toolsWithoutGo is a PATH holding the tools the script uses, but not go.
func toolsWithoutGo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, tool := range []string{"bash", "git", "curl", "awk", "tar", "gzip", "sha256sum", "mkdir", "chmod", "rm", "cat", "env", "sh"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			continue
		}
		if err := os.Symlink(p, filepath.Join(dir, tool)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestInstallScript(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("the install script runs under bash; its Windows path is Git Bash on the runner")
	}
	host, ok := hostRunner()
	if !ok {
		t.Skipf("no release asset for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	asset, _ := scriptAsset(t, host.os, host.arch)

	// The action's repository: v0.9.0 (no release) and v1.0.0 (checksums lack
	// the asset) on c1, v1.1.0 (tampered) on c2; on c3 (main) v1.9.0, v1.10.0
	// (annotated), their release candidates and the major tag v1; dev one
	// commit past it.
	repo := t.TempDir()
	git(t, repo, "init", "-q", "-b", "main")
	commit := func(msg string) string {
		git(t, repo, "commit", "-q", "--allow-empty", "-m", msg)
		return git(t, repo, "rev-parse", "HEAD")
	}
	commit("c1")
	git(t, repo, "tag", "v0.9.0")
	git(t, repo, "tag", "v1.0.0")
	commit("c2")
	git(t, repo, "tag", "v1.1.0")
	c3 := commit("c3")
	for _, tag := range []string{"v1.9.0-rc.1", "v1.9.0", "v1.10.0-rc.1"} {
		git(t, repo, "tag", tag)
	}
	git(t, repo, "tag", "-a", "v1.10.0", "-m", "v1.10.0")
	git(t, repo, "tag", "v1")
	git(t, repo, "checkout", "-q", "-b", "dev")
	commit("c4")
	git(t, repo, "update-server-info")

	h := newReleaseHost(t, repo)
	for _, tag := range []string{"v1.9.0-rc.1", "v1.9.0", "v1.10.0-rc.1", "v1.10.0"} {
		h.publish(tag, map[string][]byte{asset: tarGz(t, "mini-agent", fakeBinary(tag))}, "")
	}
	tampered := tarGz(t, "mini-agent", fakeBinary("v1.1.0"))
	h.publish("v1.1.0", map[string][]byte{asset: tampered},
		checksumsOf(map[string][]byte{asset: tarGz(t, "mini-agent", fakeBinary("other"))}))
	h.publish("v1.0.0", map[string][]byte{asset: tarGz(t, "mini-agent", fakeBinary("v1.0.0"))},
		checksumsOf(map[string][]byte{"mini-agent_plan9_amd64.tar.gz": []byte("x")}))
	src := sourceAction(t)

	cases := []struct {
		name string
		env  map[string]string
		// want: "release TAG" / "source VERSION" as the binary prints it,
		// or an error substring.
		wantBinary string
		wantErr    string
	}{
		{"exact release tag", map[string]string{"MINI_AGENT_ACTION_REF": "v1.9.0"}, "release v1.9.0 probe", ""},
		{"pre-release tag", map[string]string{"MINI_AGENT_ACTION_REF": "v1.10.0-rc.1"}, "release v1.10.0-rc.1 probe", ""},
		{"major tag follows the newest release on its commit", map[string]string{"MINI_AGENT_ACTION_REF": "v1"}, "release v1.10.0 probe", ""},
		{"commit SHA pin", map[string]string{"MINI_AGENT_ACTION_REF": c3}, "release v1.10.0 probe", ""},
		{"branch at a release commit", map[string]string{"MINI_AGENT_ACTION_REF": "main"}, "release v1.10.0 probe", ""},
		{"branch past the release builds from source", map[string]string{"MINI_AGENT_ACTION_REF": "dev"}, "source dev-source [probe]", ""},
		{"tag without a release builds from source", map[string]string{"MINI_AGENT_ACTION_REF": "v0.9.0"}, "source v0.9.0-source [probe]", ""},
		{"uses: ./ builds from source", map[string]string{"MINI_AGENT_ACTION_REF": "", "MINI_AGENT_ACTION_REPO": ""}, "source local-source [probe]", ""},
		{"no network builds from source", map[string]string{"MINI_AGENT_ACTION_REF": "v1", "GITHUB_SERVER_URL": "http://127.0.0.1:9"}, "source v1-source [probe]", ""},
		{"unsupported runner builds from source", map[string]string{"MINI_AGENT_ACTION_REF": "v1.9.0", "RUNNER_ARCH": "ARM"}, "source v1.9.0-source [probe]", ""},
		{"tampered asset is refused", map[string]string{"MINI_AGENT_ACTION_REF": "v1.1.0"}, "", "SHA-256 mismatch for " + asset},
		{"asset missing from the checksums is refused", map[string]string{"MINI_AGENT_ACTION_REF": "v1.0.0"}, "", "lists no " + asset},
		{"no release and no Go", map[string]string{"MINI_AGENT_ACTION_REF": "dev", "PATH": toolsWithoutGo(t)}, "", "Go is not installed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{"GITHUB_SERVER_URL": h.URL, "MINI_AGENT_ACTION_PATH": src}
			for k, v := range c.env {
				env[k] = v
			}
			res := runInstall(t, env)
			if c.wantErr != "" {
				if res.err == nil || !strings.Contains(res.stderr, c.wantErr) {
					t.Fatalf("err = %v, stderr:\n%s\nwant an error with %q", res.err, res.stderr, c.wantErr)
				}
				if len(res.outputs) != 0 || res.path != "" {
					t.Fatalf("a refused install set outputs %v, PATH %q", res.outputs, res.path)
				}
				return
			}
			if res.err != nil {
				t.Fatalf("install failed: %v\n%s", res.err, res.stderr)
			}
			if res.binaryRunError != nil || res.binaryOutput != c.wantBinary {
				t.Fatalf("installed binary says %q (%v), want %q\n%s", res.binaryOutput, res.binaryRunError, c.wantBinary, res.stderr)
			}
			wantSource := "release"
			if strings.HasPrefix(c.wantBinary, "source") {
				wantSource = "source"
			}
			if res.outputs["source"] != wantSource || res.path != filepath.Dir(res.outputs["path"]) {
				t.Fatalf("outputs %v, GITHUB_PATH %q", res.outputs, res.path)
			}
		})
	}
}

// TestReleaseArtifactsInstall runs release.yml's own Build and Checksums
// steps for this machine and installs the result with the install script:
// what the release publishes is what the action verifies and runs.
func TestReleaseArtifactsInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("the install script runs under bash")
	}
	dist, asset := releaseDist(t)
	archive, err := os.ReadFile(filepath.Join(dist, asset))
	if err != nil {
		t.Fatal(err)
	}
	checksums, err := os.ReadFile(filepath.Join(dist, "mini-agent_checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(archive)
	if want := hex.EncodeToString(sum[:]) + "  " + asset + "\n"; string(checksums) != want {
		t.Fatalf("checksums file:\n%s\nwant:\n%s", checksums, want)
	}

	repo := t.TempDir()
	git(t, repo, "init", "-q", "-b", "main")
	git(t, repo, "commit", "-q", "--allow-empty", "-m", "release")
	git(t, repo, "tag", "v0.0.0-actiontest")
	git(t, repo, "update-server-info")
	h := newReleaseHost(t, repo)
	h.mu.Lock()
	h.assets["v0.0.0-actiontest/"+asset] = archive
	h.assets["v0.0.0-actiontest/mini-agent_checksums.txt"] = checksums
	h.mu.Unlock()

	res := runInstall(t, map[string]string{"GITHUB_SERVER_URL": h.URL, "MINI_AGENT_ACTION_REF": "main",
		"MINI_AGENT_ACTION_PATH": t.TempDir()})
	if res.err != nil || res.outputs["source"] != "release" || res.outputs["version"] != "v0.0.0-actiontest" {
		t.Fatalf("install: %v, outputs %v\n%s", res.err, res.outputs, res.stderr)
	}
	help, err := exec.Command(res.outputs["path"], "help").CombinedOutput()
	if err != nil || !strings.Contains(string(help), "mini-agent") {
		t.Fatalf("the released binary's help: %v\n%s", err, help)
	}
}

// fakeGo is a `go` on PATH that reports version have (as `go env GOVERSION`)
// and behaves as that Go would under GOTOOLCHAIN: "local" refuses a module
// whose go.mod asks for a newer Go, with the go command's own words; any
// other value stands for the toolchain the go command fetches, which the
// real Go here plays (with GOTOOLCHAIN=local, so nothing is downloaded).
// Each build's GOTOOLCHAIN is appended to the file log.
func fakeGo(t *testing.T, have string) (dir, log string) {
	t.Helper()
	real, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go on PATH")
	}
	dir = t.TempDir()
	log = filepath.Join(dir, "toolchains.log")
	script := `#!/bin/sh
if [ "$1" = env ] && [ "$2" = GOVERSION ]; then echo "go` + have + `"; exit 0; fi
if [ "$1" = build ]; then
  echo "${GOTOOLCHAIN:-<unset>}" >> "` + log + `"
  need=$(awk '$1 == "go" { print $2; exit }' go.mod)
  case "${GOTOOLCHAIN:-auto}" in
    local) echo "go: go.mod requires go >= $need (running go ` + have + `; GOTOOLCHAIN=local)" >&2; exit 1 ;;
  esac
  GOTOOLCHAIN=local exec "` + real + `" "$@"
fi
exec "` + real + `" "$@"
`
	if err := os.WriteFile(filepath.Join(dir, "go"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, log
}

// TestInstallSourceBuildWhateverGOTOOLCHAIN: a ref without a release builds
// from source with the action's own Go requirement, whatever GOTOOLCHAIN
// the workflow exports (actions/setup-go v6: local): a new enough Go builds
// as it is; an older Go 1.21+ is told to fetch go.mod's version; an older
// Go than that fails saying exactly what to add. The log states the cost.
func TestInstallSourceBuildWhateverGOTOOLCHAIN(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("the install script runs under bash")
	}
	src := sourceAction(t)
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module example.com/fakeaction\n\ngo 1.26.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := map[string]string{"MINI_AGENT_ACTION_REF": "dev", "MINI_AGENT_ACTION_REPO": "", "MINI_AGENT_ACTION_PATH": src, "GOTOOLCHAIN": "local"}
	with := func(extra map[string]string) map[string]string {
		env := map[string]string{}
		for k, v := range base {
			env[k] = v
		}
		for k, v := range extra {
			env[k] = v
		}
		return env
	}
	t.Run("new enough Go, GOTOOLCHAIN=local", func(t *testing.T) {
		t.Parallel()
		res := runInstall(t, with(nil))
		if res.err != nil || res.binaryOutput != "source dev-source [probe]" {
			t.Fatalf("install: %v, binary %q\n%s", res.err, res.binaryOutput, res.stderr)
		}
		for _, want := range []string{"GOTOOLCHAIN=local", "about 13 minutes and 2.8 GB", "pin a release tag"} {
			if !strings.Contains(res.stderr, want) {
				t.Errorf("the log does not say %q:\n%s", want, res.stderr)
			}
		}
	})
	t.Run("older Go, GOTOOLCHAIN=local", func(t *testing.T) {
		t.Parallel()
		dir, log := fakeGo(t, "1.24.3")
		res := runInstall(t, with(map[string]string{"PATH": dir + string(os.PathListSeparator) + os.Getenv("PATH")}))
		if res.err != nil || res.binaryOutput != "source dev-source [probe]" {
			t.Fatalf("install: %v, binary %q\n%s", res.err, res.binaryOutput, res.stderr)
		}
		if got, _ := os.ReadFile(log); strings.TrimSpace(string(got)) != "go1.26.0" {
			t.Errorf("the build ran with GOTOOLCHAIN=%q, want go1.26.0 (go.mod's)", got)
		}
		if !strings.Contains(res.stderr, "the runner's Go 1.24.3 is older than the action's go.mod (1.26.0)") {
			t.Errorf("log:\n%s", res.stderr)
		}
	})
	t.Run("Go too old to fetch a toolchain", func(t *testing.T) {
		t.Parallel()
		dir, log := fakeGo(t, "1.20.14")
		res := runInstall(t, with(map[string]string{"PATH": dir + string(os.PathListSeparator) + os.Getenv("PATH")}))
		want := "add `actions/setup-go` with `go-version: '1.26.0'` before this step"
		if res.err == nil || !strings.Contains(res.stderr, want) || !strings.Contains(res.stderr, "the runner's Go is 1.20.14") {
			t.Fatalf("err %v, want a failure saying %q:\n%s", res.err, want, res.stderr)
		}
		if _, err := os.Stat(log); err == nil {
			t.Error("a build was attempted")
		}
		if len(res.outputs) != 0 || res.path != "" {
			t.Errorf("outputs %v, PATH %q", res.outputs, res.path)
		}
	})
}
