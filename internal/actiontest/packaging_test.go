package actiontest

import (
	"cmp"
	"errors"
	"maps"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// runner is a GitHub-hosted runner's RUNNER_OS / RUNNER_ARCH and the Go
// platform a binary for it is built for.
type runner struct{ os, arch, goos, goarch string }

var runners = []runner{
	{"Linux", "X64", "linux", "amd64"},
	{"Linux", "ARM64", "linux", "arm64"},
	{"macOS", "X64", "darwin", "amd64"},
	{"macOS", "ARM64", "darwin", "arm64"},
	{"Windows", "X64", "windows", "amd64"},
	{"Windows", "ARM64", "windows", "arm64"},
}

// releaseAsset is release.yml's asset name for a platform: its build job's
// ASSET with the matrix values substituted.
func releaseAsset(t *testing.T, w workflow, goos, goarch string) string {
	t.Helper()
	tmpl := w.Jobs["build"].Env["ASSET"]
	if tmpl == "" {
		t.Fatal("release.yml: the build job has no ASSET")
	}
	return strings.NewReplacer("${{ matrix.goos }}", goos, "${{ matrix.goarch }}", goarch).Replace(tmpl)
}

// scriptAsset asks the install script for a runner's asset name.
func scriptAsset(t *testing.T, osName, arch string) (string, bool) {
	t.Helper()
	cmd := exec.Command("bash", "scripts/install-action.sh", "asset", osName, arch)
	cmd.Dir = repoRoot(t)
	out, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return "", false
		}
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out)), true
}

func TestAssetNamesMatchTheReleaseWorkflow(t *testing.T) {
	t.Parallel()
	release := loadWorkflow(t, ".github/workflows/release.yml")
	var platforms [][2]string
	for _, inc := range release.Jobs["build"].Strategy.Matrix.Include {
		platforms = append(platforms, [2]string{inc["goos"], inc["goarch"]})
	}
	want := [][2]string{{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "arm64"}, {"windows", "amd64"}}
	if !slices.Equal(platforms, want) {
		t.Fatalf("release.yml builds %v, want %v", platforms, want)
	}
	released := map[string]bool{}
	for _, p := range platforms {
		released[p[0]+"/"+p[1]] = true
	}
	for _, r := range runners {
		t.Run(r.os+"-"+r.arch, func(t *testing.T) {
			t.Parallel()
			got, ok := scriptAsset(t, r.os, r.arch)
			if !released[r.goos+"/"+r.goarch] {
				if ok {
					t.Fatalf("the install script downloads %q, which no release builds", got)
				}
				return
			}
			if name := releaseAsset(t, release, r.goos, r.goarch); !ok || got != name {
				t.Fatalf("install script asset = %q (ok %v), release asset = %q", got, ok, name)
			}
		})
	}

	checksums := release.Env["CHECKSUMS"]
	script := readRepoFile(t, "scripts/install-action.sh")
	m := regexp.MustCompile(`(?m)^readonly checksums_name="([^"]+)"`).FindStringSubmatch(script)
	if checksums == "" || m == nil || m[1] != checksums {
		t.Fatalf("checksums file: release.yml %q, install script %v", checksums, m)
	}
}

// goBuild is a `go build` command line reduced to what must agree: its
// environment assignments, flags and package; -o and the version value vary.
type goBuild struct {
	env, flags []string
	ldflags    string
	pkg        string
}

var goBuildRe = regexp.MustCompile(`((?:[A-Z_]+=\S+ )*)go build (.*?) -o \S+ (\./[\w./-]+)`)

func parseGoBuild(t *testing.T, what, text string) goBuild {
	t.Helper()
	text = strings.ReplaceAll(text, "\\\n", " ")
	text = regexp.MustCompile(`[ \t]+`).ReplaceAllString(text, " ")
	m := goBuildRe.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("%s: no `go build ... -o OUT ./PKG` command", what)
	}
	b := goBuild{env: strings.Fields(m[1]), pkg: m[3]}
	flags := m[2]
	if ld := regexp.MustCompile(`-ldflags "([^"]*)"`).FindStringSubmatch(flags); ld != nil {
		b.ldflags = regexp.MustCompile(`main\.version=\S+`).ReplaceAllString(ld[1], "main.version=V")
		flags = strings.Replace(flags, ld[0], "", 1)
	}
	b.flags = strings.Fields(flags)
	slices.Sort(b.flags)
	return b
}

func TestBuildCommandsAgree(t *testing.T) {
	t.Parallel()
	release := loadWorkflow(t, ".github/workflows/release.yml")
	builds := []struct {
		name  string
		got   goBuild
		extra []string // flags allowed on top of want's
	}{
		{"release.yml", parseGoBuild(t, "release.yml", release.stepNamed(t, "build", "Build").Run), nil},
		{"Dockerfile", parseGoBuild(t, "Dockerfile", readRepoFile(t, "Dockerfile")), nil},
		// The action's path is not a checkout: no VCS stamping.
		{"install-action.sh", parseGoBuild(t, "install-action.sh", readRepoFile(t, "scripts/install-action.sh")), []string{"-buildvcs=false"}},
	}
	want := goBuild{env: []string{"CGO_ENABLED=0"}, flags: []string{"-trimpath"},
		ldflags: "-s -w -X main.version=V", pkg: "./cmd/mini-agent"}
	for _, c := range builds {
		flags := slices.DeleteFunc(slices.Clone(c.got.flags), func(f string) bool { return slices.Contains(c.extra, f) })
		if !slices.Equal(c.got.env, want.env) || !slices.Equal(flags, want.flags) ||
			c.got.ldflags != want.ldflags || c.got.pkg != want.pkg {
			t.Errorf("%s builds %+v, want %+v", c.name, c.got, want)
		}
	}
}

var (
	// specInputs are issue 5's inputs, plus `script` (the script provider's
	// trajectory, which `mini-agent action` reads too), and issue 21's
	// test-network and test-socket.
	specInputs = []string{"github-token", "provider", "model", "base-url", "api-key", "test-command",
		"mode", "failure-log", "max-steps", "max-minutes", "max-cost-usd", "price-in", "price-out", "config", "script", "ci-wait-minutes",
		"test-network", "test-socket"}
	// specOutputs are issue 5's outputs, plus issue 12's flaky mode's
	// issue and PR numbers.
	specOutputs = []string{"status", "error", "pr-url", "branch", "bundle", "trace", "steps", "tokens", "cost-usd", "flaky-issues", "flaky-prs"}
)

// inputEnv is the variable the run step sets for an input: upper-cased,
// "-" written "_", which every shell passes on to the program.
func inputEnv(name string) string {
	return "INPUT_" + strings.ToUpper(strings.NewReplacer(" ", "_", "-", "_").Replace(name))
}

func TestActionInputsAndOutputs(t *testing.T) {
	t.Parallel()
	a := loadAction(t)
	if a.Runs.Using != "composite" {
		t.Fatalf("action.yml runs using %q, want composite", a.Runs.Using)
	}
	if got := slices.Sorted(maps.Keys(a.Inputs)); !slices.Equal(got, slices.Sorted(slices.Values(specInputs))) {
		t.Fatalf("inputs = %v, want %v", got, specInputs)
	}
	defaults := map[string]string{"github-token": "${{ github.token }}", "mode": "auto", "config": ".github/mini-agent.yml"}
	runEnv := a.stepID(t, "run").Env
	for _, name := range specInputs {
		in := a.Inputs[name]
		if strings.TrimSpace(in.Description) == "" {
			t.Errorf("input %s has no description", name)
		}
		if d, ok := defaults[name]; ok && (in.Default == nil || *in.Default != d) {
			t.Errorf("input %s: default is not %q", name, d)
		}
		if got := runEnv[inputEnv(name)]; got != "${{ inputs."+name+" }}" {
			t.Errorf("run step env %s = %q, want ${{ inputs.%s }}", inputEnv(name), got, name)
		}
	}
	for k := range runEnv {
		if strings.HasPrefix(k, "INPUT_") && !slices.ContainsFunc(specInputs, func(n string) bool { return inputEnv(n) == k }) {
			t.Errorf("run step sets %s, which is no input", k)
		}
	}
	if run := a.stepID(t, "run").Run; !strings.Contains(run, " action") {
		t.Errorf("the run step does not run `mini-agent action`: %q", run)
	}

	if got := slices.Sorted(maps.Keys(a.Outputs)); !slices.Equal(got, slices.Sorted(slices.Values(specOutputs))) {
		t.Fatalf("outputs = %v, want %v", got, specOutputs)
	}
	for _, name := range specOutputs {
		out := a.Outputs[name]
		if out.Value != "${{ steps.run.outputs."+name+" }}" {
			t.Errorf("output %s = %q, not mapped from the run step", name, out.Value)
		}
		if strings.TrimSpace(out.Description) == "" {
			t.Errorf("output %s has no description", name)
		}
	}

	install := a.stepID(t, "install")
	for k, v := range map[string]string{
		"MINI_AGENT_ACTION_REF":  "${{ github.action_ref }}",
		"MINI_AGENT_ACTION_REPO": "${{ github.action_repository }}",
		"MINI_AGENT_ACTION_PATH": "${{ github.action_path }}",
	} {
		// In a composite action these are only reliable through the step's
		// env (actions/runner#2473), not as GITHUB_ACTION_* variables.
		if install.Env[k] != v {
			t.Errorf("install step env %s = %q, want %q", k, install.Env[k], v)
		}
	}
}

// TestActionInputsMatchTheProgram checks action.yml's inputs against the
// names `mini-agent action` reads (its inputNames list).
func TestActionInputsMatchTheProgram(t *testing.T) {
	t.Parallel()
	// The list lives in the action application (internal/action) or, in
	// older layouts, in the command (cmd/mini-agent); exactly one file holds it.
	list := regexp.MustCompile(`(?s)var inputNames = \[\]string\{(.*?)\}`)
	var m []string
	var holders []string
	for _, pattern := range []string{"internal/action/*.go", "cmd/mini-agent/*.go"} {
		files, err := filepathGlob(repoRoot(t), pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			if found := list.FindStringSubmatch(readRepoFile(t, f)); found != nil {
				m, holders = found, append(holders, f)
			}
		}
	}
	if len(holders) != 1 {
		t.Fatalf("files holding `var inputNames = []string{...}` under internal/action and cmd/mini-agent: %v, want exactly one; update this test with the program's input list", holders)
	}
	var program []string
	for _, q := range regexp.MustCompile(`"([^"]+)"`).FindAllStringSubmatch(m[1], -1) {
		program = append(program, q[1])
	}
	declared := slices.Sorted(maps.Keys(loadAction(t).Inputs))
	if !slices.Equal(slices.Sorted(slices.Values(program)), declared) {
		t.Errorf("mini-agent action reads %v; action.yml declares %v", program, declared)
	}
}

// TestNoExpressionsInRun guards against shell injection: no `${{ }}` inside a
// `run:` script of the action or of the project's workflows (and every file
// parses as YAML).
func TestNoExpressionsInRun(t *testing.T) {
	t.Parallel()
	files, err := filepathGlob(repoRoot(t), ".github/workflows/*.yml")
	if err != nil {
		t.Fatal(err)
	}
	tests, err := filepathGlob(repoRoot(t), "internal/actiontest/testdata/workflows/*.yml")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, tests...)
	if len(files) < 3 {
		t.Fatalf("found only %v", files)
	}
	scripts := map[string][]step{"action.yml": loadAction(t).Runs.Steps}
	for _, f := range files {
		for _, j := range loadWorkflow(t, f).Jobs {
			scripts[f] = append(scripts[f], j.Steps...)
		}
	}
	for f, steps := range scripts {
		n := 0
		for _, s := range steps {
			if s.Run == "" {
				continue
			}
			n++
			if strings.Contains(s.Run, "${{") {
				t.Errorf("%s: step %q interpolates an expression into its script; pass it through env:\n%s", f, cmp.Or(s.Name, s.ID), s.Run)
			}
		}
		if n == 0 {
			t.Errorf("%s: no run scripts found; the check would be vacuous", f)
		}
	}
}
