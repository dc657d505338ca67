package patch

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/org/mini-agent/internal/patch/patchtest"
)

// gitTimeout bounds one git invocation of the report.
const gitTimeout = 20 * time.Second

// verdict classifies one tool's outcome on one case.
type verdict int

const (
	appliedOK        verdict = iota // applied, result as expected
	refusedOK                       // refused (or left untouched) a case that must be refused
	refusedValid                    // refused a case that should apply
	misapplied                      // applied, wrong result
	appliedRefusable                // changed files on a case that must be refused (a guess)
	crashed                         // panic, signal or timeout
	numVerdicts
)

var verdictNames = [numVerdicts]string{"applied-ok", "refused-ok", "refused-valid", "misapplied", "applied-refusable", "crashed"}

func classify(c *patchtest.Case, got map[string]patchtest.File, applied bool) verdict {
	switch {
	case c.Want.Applied && !applied:
		return refusedValid
	case c.Want.Applied && treeDiff(got, c.Result) == "":
		return appliedOK
	case c.Want.Applied:
		return misapplied
	case !applied || treeDiff(got, c.Files) == "":
		return refusedOK
	}
	return appliedRefusable
}

// engineVerdict runs the engine on a case, turning a panic into crashed.
func engineVerdict(c *patchtest.Case) (v verdict, res *Result) {
	defer func() {
		if r := recover(); r != nil {
			v = crashed
		}
	}()
	got, res, err := runEngine(c.Files, c.Patch)
	return classify(c, got, err == nil), res
}

func writeTree(t *testing.T, dir string, files map[string]patchtest.File) {
	t.Helper()
	for p, f := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := fs.FileMode(0o644)
		if f.Exec {
			mode = 0o755
		}
		if err := os.WriteFile(full, f.Data, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(full, mode); err != nil {
			t.Fatal(err)
		}
	}
}

func readTree(t *testing.T, dir string) map[string]patchtest.File {
	t.Helper()
	out := map[string]patchtest.File{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = patchtest.File{Data: data, Exec: fi.Mode()&0o111 != 0}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// gitApply runs the real git apply with args on a fresh copy of the case's
// files, outside any repository, and reports the resulting tree.
func gitApply(t *testing.T, files map[string]patchtest.File, patchText string, args ...string) (tree map[string]patchtest.File, ok, crash bool) {
	t.Helper()
	base := t.TempDir()
	dir := filepath.Join(base, "work")
	writeTree(t, dir, files)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	pf := filepath.Join(base, "p.diff")
	if err := os.WriteFile(pf, []byte(patchText), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append(append([]string{"apply"}, args...), pf)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CEILING_DIRECTORIES="+base)
	err := cmd.Run()
	if ctx.Err() != nil {
		return nil, false, true
	}
	if ee, isExit := err.(*exec.ExitError); isExit && ee.ProcessState.ExitCode() < 0 {
		return nil, false, true // killed by a signal
	}
	return readTree(t, dir), err == nil, false
}

// TestRobustnessReport runs the corpus through the engine, `git apply` and
// `git apply --recount`, prints the table (go test -run
// TestRobustnessReport -v), and holds the engine to its targets: every case
// as expected, zero misapplied, zero crashes, every rebuilt diff accepted by
// git itself.
func TestRobustnessReport(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	cases := loadCorpus(t)
	tools := []string{"mini-agent", "git apply", "git apply --recount"}
	_, gitErr := exec.LookPath("git")
	var counts [3][numVerdicts]int
	var details []string
	rebuiltOK, rebuiltTotal := 0, 0
	for _, c := range cases {
		ev, res := engineVerdict(c)
		counts[0][ev]++
		row := []string{verdictNames[ev]}
		if gitErr == nil {
			for k, args := range [][]string{nil, {"--recount"}} {
				tree, ok, crash := gitApply(t, c.Files, c.Patch, args...)
				v := crashed
				if !crash {
					v = classify(c, tree, ok)
				}
				counts[k+1][v]++
				row = append(row, verdictNames[v])
			}
			if res != nil {
				rebuiltTotal++
				if tree, ok, _ := gitApply(t, c.Files, res.Diff); ok && treeDiff(tree, c.Result) == "" {
					rebuiltOK++
				} else {
					t.Errorf("%s: git apply does not reproduce the engine's result from the rebuilt diff:\n%s", c.Name, res.Diff)
				}
			}
		}
		details = append(details, fmt.Sprintf("%-32s %s", c.Name, strings.Join(row, " | ")))
	}

	var b strings.Builder
	applicable := 0
	for _, c := range cases {
		if c.Want.Applied {
			applicable++
		}
	}
	fmt.Fprintf(&b, "apply_patch robustness: %d cases (%d should apply, %d should be refused)\n", len(cases), applicable, len(cases)-applicable)
	fmt.Fprintf(&b, "%-22s", "tool")
	for _, n := range verdictNames {
		fmt.Fprintf(&b, " %17s", n)
	}
	b.WriteString("\n")
	for k, name := range tools {
		if k > 0 && gitErr != nil {
			fmt.Fprintf(&b, "%-22s (git not found)\n", name)
			continue
		}
		fmt.Fprintf(&b, "%-22s", name)
		for _, n := range counts[k] {
			fmt.Fprintf(&b, " %17d", n)
		}
		b.WriteString("\n")
	}
	if gitErr == nil {
		fmt.Fprintf(&b, "rebuilt diffs that git apply reproduces exactly: %d/%d\n", rebuiltOK, rebuiltTotal)
	}
	b.WriteString("\nper case (mini-agent | git apply | git apply --recount):\n")
	b.WriteString(strings.Join(details, "\n"))
	t.Log("\n" + b.String())

	mine := counts[0]
	if mine[misapplied] != 0 || mine[crashed] != 0 || mine[appliedRefusable] != 0 || mine[refusedValid] != 0 {
		t.Errorf("engine targets missed: %v", mine)
	}
	if mine[appliedOK] != applicable {
		t.Errorf("engine applied %d of %d applicable cases", mine[appliedOK], applicable)
	}
}
