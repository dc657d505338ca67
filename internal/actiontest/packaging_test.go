package actiontest

import (
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

// releasePlatforms parses the build matrix of release.yml.
func releasePlatforms(t *testing.T, workflow string) [][2]string {
	t.Helper()
	body, ok := block(strings.Split(workflow, "\n"), `^include:$`)
	if !ok {
		t.Fatal("release.yml: no matrix include")
	}
	var out [][2]string
	kv := regexp.MustCompile(`^(?:- )?(goos|goarch): *(\S+)$`)
	for _, l := range body {
		m := kv.FindStringSubmatch(strings.TrimSpace(l))
		switch {
		case m == nil:
		case m[1] == "goos":
			out = append(out, [2]string{m[2], ""})
		case len(out) == 0 || out[len(out)-1][1] != "":
			t.Fatalf("release.yml: goarch %q without its goos", m[2])
		default:
			out[len(out)-1][1] = m[2]
		}
	}
	return out
}

// scriptAsset asks the install script for a runner's asset name.
func scriptAsset(t *testing.T, osName, arch string) (string, bool) {
	t.Helper()
	cmd := exec.Command("bash", "scripts/install-action.sh", "asset", osName, arch)
	cmd.Dir = repoRoot(t)
	out, err := cmd.Output()
	if err != nil {
		if _, isExit := err.(*exec.ExitError); isExit {
			return "", false
		}
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out)), true
}

func TestAssetNamesMatchTheReleaseWorkflow(t *testing.T) {
	t.Parallel()
	release := readRepoFile(t, ".github/workflows/release.yml")
	platforms := releasePlatforms(t, release)
	want := [][2]string{{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "arm64"}, {"windows", "amd64"}}
	if !slices.Equal(platforms, want) {
		t.Fatalf("release.yml builds %v, want %v", platforms, want)
	}
	tmpl := regexp.MustCompile(`(?m)^\s+ASSET: (.+)$`).FindStringSubmatch(release)
	if tmpl == nil {
		t.Fatal("release.yml: no ASSET in the build job's env")
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
			name := strings.NewReplacer("${{ matrix.goos }}", r.goos, "${{ matrix.goarch }}", r.goarch).Replace(tmpl[1])
			if !ok || got != name {
				t.Fatalf("install script asset = %q (ok %v), release asset = %q", got, ok, name)
			}
		})
	}

	checksums := mapping(t, release, `^env:$`)["CHECKSUMS"]
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
	release := parseGoBuild(t, "release.yml", stepRun(t, readRepoFile(t, ".github/workflows/release.yml"), "Build"))
	docker := parseGoBuild(t, "Dockerfile", readRepoFile(t, "Dockerfile"))
	source := parseGoBuild(t, "install-action.sh", readRepoFile(t, "scripts/install-action.sh"))

	want := goBuild{env: []string{"CGO_ENABLED=0"}, flags: []string{"-trimpath"},
		ldflags: "-s -w -X main.version=V", pkg: "./cmd/mini-agent"}
	for _, c := range []struct {
		name  string
		got   goBuild
		extra []string // flags allowed on top of want's
	}{
		{"release.yml", release, nil},
		{"Dockerfile", docker, nil},
		// The action's path is not a checkout: no VCS stamping.
		{"install-action.sh", source, []string{"-buildvcs=false"}},
	} {
		flags := slices.DeleteFunc(slices.Clone(c.got.flags), func(f string) bool { return slices.Contains(c.extra, f) })
		if !slices.Equal(c.got.env, want.env) || !slices.Equal(flags, want.flags) ||
			c.got.ldflags != want.ldflags || c.got.pkg != want.pkg {
			t.Errorf("%s builds %+v, want %+v", c.name, c.got, want)
		}
	}
}

// actionBlock returns the entries (name → their lines) of a top-level
// mapping of action.yml such as inputs or outputs.
func actionEntries(t *testing.T, action, top string) map[string]string {
	t.Helper()
	body, ok := block(strings.Split(action, "\n"), "^"+top+":$")
	if !ok {
		t.Fatalf("action.yml: no %s", top)
	}
	out := map[string]string{}
	var cur string
	for _, l := range body {
		if indentOf(l) == 2 && strings.HasSuffix(strings.TrimSpace(l), ":") {
			cur = strings.TrimSuffix(strings.TrimSpace(l), ":")
			out[cur] = ""
			continue
		}
		if cur != "" {
			out[cur] += strings.TrimSpace(l) + "\n"
		}
	}
	return out
}

var (
	specInputs = []string{"github-token", "provider", "model", "base-url", "api-key", "test-command",
		"mode", "failure-log", "max-steps", "max-minutes", "max-cost-usd", "config"}
	specOutputs = []string{"status", "pr-url", "branch", "bundle", "trace", "steps", "tokens", "cost-usd"}
)

func TestActionInputsAndOutputs(t *testing.T) {
	t.Parallel()
	action := readRepoFile(t, "action.yml")
	if !regexp.MustCompile(`(?m)^  using: composite$`).MatchString(action) {
		t.Fatal("action.yml is not a composite action")
	}
	inputs := actionEntries(t, action, "inputs")
	if got := slices.Sorted(maps.Keys(inputs)); !slices.Equal(got, slices.Sorted(slices.Values(specInputs))) {
		t.Fatalf("inputs = %v, want %v", got, specInputs)
	}
	defaults := map[string]string{"github-token": "${{ github.token }}", "mode": "auto", "config": ".github/mini-agent.yml"}
	lines := strings.Split(action, "\n")
	runEnv := mapping(t, strings.Join(mustStep(t, lines, "run"), "\n"), `^env:$`)
	for _, name := range specInputs {
		body := inputs[name]
		if !regexp.MustCompile(`(?m)^description: \S`).MatchString(body) {
			t.Errorf("input %s has no description", name)
		}
		if d, ok := defaults[name]; ok && !strings.Contains(body, "default: "+d+"\n") {
			t.Errorf("input %s: default is not %q:\n%s", name, d, body)
		}
		env := "INPUT_" + strings.ToUpper(strings.ReplaceAll(name, " ", "_"))
		if got := runEnv[env]; got != "${{ inputs."+name+" }}" {
			t.Errorf("run step env %s = %q, want ${{ inputs.%s }}", env, got, name)
		}
	}
	for k := range runEnv {
		if strings.HasPrefix(k, "INPUT_") && !slices.Contains(specInputs, strings.ToLower(strings.TrimPrefix(k, "INPUT_"))) {
			t.Errorf("run step sets %s, which is no input", k)
		}
	}

	outputs := actionEntries(t, action, "outputs")
	if got := slices.Sorted(maps.Keys(outputs)); !slices.Equal(got, slices.Sorted(slices.Values(specOutputs))) {
		t.Fatalf("outputs = %v, want %v", got, specOutputs)
	}
	for _, name := range specOutputs {
		if !strings.Contains(outputs[name], "value: ${{ steps.run.outputs."+name+" }}\n") {
			t.Errorf("output %s is not mapped from the run step:\n%s", name, outputs[name])
		}
		if !regexp.MustCompile(`(?m)^description: \S`).MatchString(outputs[name]) {
			t.Errorf("output %s has no description", name)
		}
	}
}

// mustStep returns the lines of the composite step with the given id.
func mustStep(t *testing.T, lines []string, id string) []string {
	t.Helper()
	body, ok := block(lines, `^- id: `+regexp.QuoteMeta(id)+`$`)
	if !ok {
		t.Fatalf("action.yml: no step with id %q", id)
	}
	return body
}

// TestNoExpressionsInRun guards against shell injection: no `${{ }}` inside a
// `run:` script of the action or of the project's workflows.
func TestNoExpressionsInRun(t *testing.T) {
	t.Parallel()
	files := []string{"action.yml"}
	entries, err := filepathGlob(repoRoot(t), ".github/workflows/*.yml")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, entries...)
	if len(files) < 2 {
		t.Fatalf("found only %v", files)
	}
	for _, f := range files {
		text := readRepoFile(t, f)
		n := 0
		lines := strings.Split(text, "\n")
		for i, l := range lines {
			trim := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "- "))
			if !strings.HasPrefix(trim, "run:") {
				continue
			}
			n++
			script := []string{trim}
			if strings.HasSuffix(trim, "|") || strings.HasSuffix(trim, ">") {
				body, _ := block(lines[i:], `^(- )?run: [|>]$`)
				script = body
			}
			if s := strings.Join(script, "\n"); strings.Contains(s, "${{") {
				t.Errorf("%s:%d: a run script interpolates an expression; pass it through env:\n%s", f, i+1, s)
			}
		}
		if n == 0 {
			t.Errorf("%s: no run scripts found; the check would be vacuous", f)
		}
	}
}
