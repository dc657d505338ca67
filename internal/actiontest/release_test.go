package actiontest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// actionRepo is the action's repository on the fake release host.
const actionRepo = "org/mini-agent"

// releaseHost fakes the two github.com surfaces the install script uses: the
// action repository's refs over git's dumb HTTP protocol (for ls-remote), and
// release downloads, which redirect to a second host as GitHub's do.
type releaseHost struct {
	URL string // GITHUB_SERVER_URL

	mu        sync.Mutex
	assets    map[string][]byte // "TAG/NAME"
	downloads []string
}

// newReleaseHost serves the git repository at gitDir (a work tree whose
// .git has had `git update-server-info`) as actionRepo.
func newReleaseHost(t *testing.T, gitDir string) *releaseHost {
	t.Helper()
	h := &releaseHost{assets: map[string][]byte{}}
	objects := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := strings.TrimPrefix(r.URL.Path, "/dl/")
		h.mu.Lock()
		data, ok := h.assets[key]
		h.downloads = append(h.downloads, key)
		h.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(data)
	}))
	t.Cleanup(objects.Close)
	files := http.StripPrefix("/"+actionRepo, http.FileServer(http.Dir(filepath.Join(gitDir, ".git"))))
	main := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rest, ok := strings.CutPrefix(r.URL.Path, "/"+actionRepo+"/releases/download/"); ok {
			h.mu.Lock()
			_, exists := h.assets[rest]
			h.mu.Unlock()
			if !exists {
				http.NotFound(w, r)
				return
			}
			http.Redirect(w, r, objects.URL+"/dl/"+rest, http.StatusFound)
			return
		}
		if r.Method != http.MethodGet || !strings.HasPrefix(r.URL.Path, "/"+actionRepo+"/") {
			http.NotFound(w, r)
			return
		}
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(main.Close)
	h.URL = main.URL
	return h
}

// publish adds a release: its assets and a checksums file over them (or
// the checksums given, to fake a tampered release).
func (h *releaseHost) publish(tag string, assets map[string][]byte, checksums string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if checksums == "" {
		checksums = checksumsOf(assets)
	}
	for name, data := range assets {
		h.assets[tag+"/"+name] = data
	}
	h.assets[tag+"/mini-agent_checksums.txt"] = []byte(checksums)
}

// downloadsOf counts the downloads of release tag's files.
func (h *releaseHost) downloadsOf(tag string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, d := range h.downloads {
		if strings.HasPrefix(d, tag+"/") {
			n++
		}
	}
	return n
}

// checksumsOf renders a sha256sum file.
func checksumsOf(assets map[string][]byte) string {
	names := make([]string, 0, len(assets))
	for n := range assets {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		sum := sha256.Sum256(assets[n])
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(sum[:]), n)
	}
	return b.String()
}

// tarGz packs one executable file.
func tarGz(t *testing.T, name string, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(data)), ModTime: time.Unix(0, 0)}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// git runs git in dir and returns its trimmed output.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(scrubbedEnv(),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// scrubbedEnv is the test process's environment without the variables a CI
// runner (or this test's own setup) would leak into the script under test.
func scrubbedEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GITHUB_") || strings.HasPrefix(k, "RUNNER_") || strings.HasPrefix(k, "INPUT_") ||
			strings.HasPrefix(k, "ACTIONS_") || strings.HasPrefix(k, "MINI_AGENT_") || strings.HasPrefix(k, "GIT_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// hostRunner is this machine as a runner, or false when no release is
// built for it (the release-download tests then cannot run the binary).
func hostRunner() (runner, bool) {
	for _, r := range runners {
		if r.goos == runtime.GOOS && r.goarch == runtime.GOARCH {
			return r, true
		}
	}
	return runner{}, false
}

var (
	distOnce sync.Once
	distDir  string
	distErr  error
)

// releaseDist runs release.yml's Build step for this machine's platform and
// its Checksums step, once per test process, and returns the dist directory
// holding the archive and the checksums file.
func releaseDist(t *testing.T) (dir, asset string) {
	t.Helper()
	r, ok := hostRunner()
	if !ok {
		t.Skipf("the release builds no binary for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	release := loadWorkflow(t, ".github/workflows/release.yml")
	asset = releaseAsset(t, release, r.goos, r.goarch)
	distOnce.Do(func() {
		var tmp string
		if tmp, distErr = os.MkdirTemp("", "mini-agent-release-"); distErr != nil {
			return
		}
		cleanups = append(cleanups, func() { os.RemoveAll(tmp) })
		env := append(scrubbedEnv(), "RUNNER_TEMP="+tmp, "ASSET="+asset, "GOOS="+r.goos, "GOARCH="+r.goarch,
			"VERSION=v0.0.0-actiontest", "CHECKSUMS="+release.Env["CHECKSUMS"])
		for _, s := range []step{release.stepNamed(t, "build", "Build"), release.stepNamed(t, "release", "Checksums")} {
			cmd := exec.Command("bash", "-c", s.Run)
			cmd.Dir = repoRoot(t)
			cmd.Env = env
			if out, err := cmd.CombinedOutput(); err != nil {
				distErr = fmt.Errorf("release.yml step %s: %w\n%s", s.Name, err, out)
				return
			}
		}
		distDir = filepath.Join(tmp, "dist")
	})
	if distErr != nil {
		t.Fatal(distErr)
	}
	return distDir, asset
}

// cleanups run after all tests (TestMain).
var cleanups []func()

func TestMain(m *testing.M) {
	code := m.Run()
	for _, f := range cleanups {
		f()
	}
	os.Exit(code)
}
