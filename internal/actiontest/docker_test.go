package actiontest

import (
	"encoding/json"
	"os/exec"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/org/mini-agent/internal/glob"
)

// stage is one FROM section of the Dockerfile.
type stage struct {
	from, name string
	lines      []string
}

func dockerStages(t *testing.T, dockerfile string) (args map[string]string, stages []stage) {
	t.Helper()
	args = map[string]string{}
	text := strings.ReplaceAll(dockerfile, "\\\n", " ")
	from := regexp.MustCompile(`^FROM (\S+)(?: AS (\S+))?$`)
	arg := regexp.MustCompile(`^ARG (\w+)=(\S+)$`)
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if m := from.FindStringSubmatch(l); m != nil {
			stages = append(stages, stage{from: m[1], name: m[2]})
			continue
		}
		if len(stages) == 0 {
			if m := arg.FindStringSubmatch(l); m != nil {
				args[m[1]] = m[2]
			}
			continue
		}
		stages[len(stages)-1].lines = append(stages[len(stages)-1].lines, l)
	}
	return args, stages
}

func TestDockerfile(t *testing.T) {
	t.Parallel()
	args, stages := dockerStages(t, readRepoFile(t, "Dockerfile"))
	if len(stages) < 2 {
		t.Fatalf("not a multi-stage build: %d stages", len(stages))
	}
	build := stages[0]
	if build.name != "build" || build.from != "golang:${GO_VERSION}" {
		t.Fatalf("first stage = FROM %s AS %s, want the golang:${GO_VERSION} builder", build.from, build.name)
	}
	gomod := readRepoFile(t, "go.mod")
	goVer := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindStringSubmatch(gomod)
	if goVer == nil || args["GO_VERSION"] != goVer[1] {
		t.Errorf("ARG GO_VERSION=%q, go.mod says go %v", args["GO_VERSION"], goVer)
	}
	out := regexp.MustCompile(`go build .* -o (\S+) `).FindStringSubmatch(strings.Join(build.lines, "\n"))
	if out == nil {
		t.Fatal("builder: no go build -o")
	}

	finals := map[string]stage{}
	for _, s := range stages[1:] {
		finals[s.name] = s
	}
	if stages[len(stages)-1].name != "minimal" {
		t.Errorf("the default (last) target is %q, want the small static image `minimal`", stages[len(stages)-1].name)
	}
	if m := finals["minimal"]; !strings.HasPrefix(m.from, "gcr.io/distroless/static") {
		t.Errorf("minimal is FROM %s, want distroless/static", m.from)
	}
	for _, name := range []string{"minimal", "toolchain"} {
		s, ok := finals[name]
		if !ok {
			t.Errorf("no %s target", name)
			continue
		}
		user := ""
		copied := false
		for _, l := range s.lines {
			if u, ok := strings.CutPrefix(l, "USER "); ok {
				user = u
			}
			if strings.HasPrefix(l, "COPY --from=build "+out[1]+" ") {
				copied = true
			}
		}
		if user == "" || user == "root" || strings.HasPrefix(user, "0") || strings.HasPrefix(user, "root:") {
			t.Errorf("%s runs as %q, want a non-root user", name, user)
		}
		if !copied {
			t.Errorf("%s does not copy %s from the builder", name, out[1])
		}
	}
	if tc := strings.Join(finals["toolchain"].lines, "\n"); !strings.Contains(tc, "command -v git") {
		t.Error("the toolchain target does not make sure git is installed")
	}
}

// TestDockerignoreKeepsBuildInputs checks that the build context keeps every
// file `go build ./cmd/mini-agent` reads (sources, embedded files, go.mod/sum)
// and leaves out the .git directory.
func TestDockerignoreKeepsBuildInputs(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	var patterns []string
	for _, l := range strings.Split(readRepoFile(t, ".dockerignore"), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if strings.HasPrefix(l, "!") {
			t.Fatalf(".dockerignore exception %q: this check does not model exceptions", l)
		}
		patterns = append(patterns, path.Clean(strings.TrimPrefix(l, "/")))
	}
	excluded := func(rel string) bool {
		for p := rel; p != "."; p = path.Dir(p) {
			if _, ok := glob.Any(patterns, p); ok {
				return true
			}
		}
		return false
	}
	if !excluded(".git/config") {
		t.Error(".dockerignore keeps .git (it may hold a token)")
	}

	cmd := exec.Command("go", "list", "-deps", "-json=Dir,Module,GoFiles,EmbedFiles", "./cmd/mini-agent")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	needed := []string{"go.mod", "go.sum"}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p struct {
			Dir                 string
			Module              *struct{ Main bool }
			GoFiles, EmbedFiles []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		if p.Module == nil || !p.Module.Main {
			continue
		}
		dir, err := relSlash(root, p.Dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range append(p.GoFiles, p.EmbedFiles...) {
			needed = append(needed, path.Join(dir, f))
		}
	}
	if len(needed) < 10 {
		t.Fatalf("go list found only %v", needed)
	}
	for _, f := range needed {
		if excluded(f) {
			t.Errorf(".dockerignore excludes %s, which the build reads", f)
		}
	}
}
