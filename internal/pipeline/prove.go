package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/org/mini-agent/internal/bundle"
	"github.com/org/mini-agent/internal/cleantree"
	"github.com/org/mini-agent/internal/flakyrun"
	"github.com/org/mini-agent/internal/proc"
	"github.com/org/mini-agent/internal/sandbox"
	"github.com/org/mini-agent/internal/testcmd"
)

// goModTimeout bounds the harness's own go mod download / verify.
const goModTimeout = 10 * time.Minute

// prover runs the baseline and the proof, each on its own clean checkout:
// the tracked files of the base commit (plus, for the proof, exactly the
// change the bundle carries), never the live workspace, whose ignored and
// untracked files, go.work and test caches are not what a PR publishes.
type prover struct {
	repo   string // the workspace (its objects are borrowed read-only)
	commit string // the base commit
	cmd    *testcmd.Command
	env    []string // the harness's environment (trusted)
	cfg    flakyrun.Config
	r      *runner
	// goBin is the go binary the harness's own go commands run, resolved
	// at start-up, before any test code could plant another on PATH (""
	// when the runner is not Go or go is not found).
	goBin string
	// protections names what contained the latest clean-checkout run.
	protections string
	// deps are the workspace's installed dependencies a clean checkout is
	// given read-only (dependencyDirs), depsPrint their fingerprint before
	// any test code ran (depsErr why there is none).
	deps      []string
	depsPrint string
	depsErr   error
}

// prover is called from start, before the first test run.
func (s *session) prover(cmd *testcmd.Command) *prover {
	r := s.r
	// The clean checkouts are the harness's (as root, test code runs
	// there as an unprivileged user they are given to), and the
	// workspace's persisted credentials stay hidden there too: test code
	// knows where the workspace is.
	access := r.TestAccess()
	access.HandOver, access.Masks = true, s.credMasks
	p := &prover{repo: s.ws.Dir(), commit: s.b.BaseSHA, cmd: cmd, env: r.Environ, r: r, cfg: flakyrun.Config{
		MaxTime: 24 * time.Hour, RunTimeout: r.TestTimeout, EnvAllow: r.TestEnv, SecretNames: r.SecretNames,
		WritableDirs: r.TestWritable, NoSandbox: r.NoSandbox, Access: access,
	}}
	if cmd.Runner() == testcmd.Go {
		p.goBin = resolve("go")
	}
	if p.deps = dependencyDirs(s.ignored); len(p.deps) > 0 {
		p.depsPrint, p.depsErr = fingerprintDirs(p.repo, p.deps)
		p.keepIdentityFor(s)
	}
	return p
}

// keepIdentityFor keeps the clean checkouts' runs as the user the
// workspace's runs are (as root: uid 0 without capabilities) when the
// installed dependencies linked into them are where the unprivileged user
// a handed-over checkout runs as could not read them (a workspace under a
// 0700 directory); the warning says so.
func (p *prover) keepIdentityFor(s *session) {
	if os.Geteuid() != 0 || !p.cfg.Access.HandOver || p.cfg.NoSandbox || sandbox.Launcher() == "" {
		return
	}
	var paths []string
	for _, d := range p.deps {
		paths = append(paths, filepath.Join(p.repo, filepath.FromSlash(d)))
	}
	if unreadable := sandbox.NobodyCannotRead(paths); len(unreadable) > 0 {
		p.cfg.Access.HandOver = false
		s.b.Warnings = append(s.b.Warnings, "the clean checkouts' test runs keep the workspace's identity (uid 0 without capabilities), "+
			"not an unprivileged user: it could not read the installed dependencies they need ("+strings.Join(d2rel(p.repo, unreadable), ", ")+")")
	}
}

func d2rel(root string, paths []string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if rel, err := filepath.Rel(root, p); err == nil {
			p = filepath.ToSlash(rel)
		}
		out = append(out, p)
	}
	return out
}

// resolve is the absolute, link-free path of program on PATH, or "".
func resolve(program string) string {
	path, err := exec.LookPath(program)
	if err == nil {
		path, err = filepath.Abs(path)
	}
	if err == nil {
		path, err = filepath.EvalSymlinks(path)
	}
	if err != nil {
		return ""
	}
	return path
}

// checkout makes a clean tree of the base commit with changes applied,
// the workspace's installed dependencies linked in read-only; notes say
// which were linked and which could not be.
func (p *prover) checkout(ctx context.Context, changes []cleantree.Change) (*cleantree.Tree, []string, error) {
	if p.commit == "" {
		return nil, nil, errors.New("the workspace has no commit: the harness needs a base commit to reproduce and validate on a clean checkout")
	}
	t, err := cleantree.Checkout(ctx, p.repo, p.commit)
	if err != nil {
		return nil, nil, fmt.Errorf("clean checkout of %s: %w", short(p.commit), err)
	}
	notes := LinkDependencies(t, p.repo, p.deps)
	if len(changes) > 0 {
		if err := t.Apply(changes); err != nil {
			t.Close()
			return nil, nil, fmt.Errorf("clean checkout: apply the change: %w", err)
		}
	}
	return t, notes, nil
}

// depsChanged says how the workspace's installed dependencies changed
// since the run started ("" when they did not, or there are none); a
// proof that used changed dependencies does not hold.
func (p *prover) depsChanged() string {
	if len(p.deps) == 0 {
		return ""
	}
	if p.depsErr != nil {
		return "" // never fingerprinted: the baseline's note says so
	}
	now, err := fingerprintDirs(p.repo, p.deps)
	switch {
	case err != nil:
		return "the workspace's installed dependencies (" + strings.Join(p.deps, ", ") + ") could not be checked after the runs: " + oneLine(err.Error())
	case now != p.depsPrint:
		return "the workspace's installed dependencies (" + strings.Join(p.deps, ", ") + ") changed during the run (test code or a tool wrote them): the runs on the published tree used them, so they prove nothing"
	}
	return ""
}

// phaser is the phase runner for tree t: Go's workspace file is off unless
// the commit tracks it; the module cache is read-only to test code once
// the harness downloaded what the module needs.
func (p *prover) phaser(t *cleantree.Tree, readOnlyModules bool) *phaser {
	cfg := p.cfg
	cfg.Env = append(slices.Clone(p.env), p.goEnv(t)...)
	cfg.ReadOnlyModules = readOnlyModules
	return &phaser{cmd: p.cmd, base: cfg, progress: p.r.Progress, ran: func(prot string) { p.protections = prot }}
}

// goEnv is what the runs on a clean tree add to the environment: GOWORK
// off unless the commit tracks a go.work at its root (an ignored go.work
// can replace any dependency); GOFLAGS and the rest of GO* come from the
// harness's own environment, which is trusted.
func (p *prover) goEnv(t *cleantree.Tree) []string {
	if p.cmd.Runner() != testcmd.Go {
		return nil
	}
	if t.Tracked("go.work") {
		return nil
	}
	return []string{"GOWORK=off"}
}

// goMod runs `go mod VERB` as the harness (no sandbox: it downloads, or
// hashes the module cache; it runs no code of the module) in each
// directory the test command runs go test in (the root, go -C DIR, each
// module of a suite). A directory without a go.mod, a vendored module, and
// one reached through a symbolic link (the tree is the repository's, which
// is untrusted) need nothing.
func (p *prover) goMod(ctx context.Context, t *cleantree.Tree, verb string) (string, error) {
	if p.cmd.Runner() != testcmd.Go {
		return "", nil
	}
	env := append(proc.AllowEnv(p.env, p.r.TestEnv, p.r.SecretNames), p.goEnv(t)...)
	var outs []string
	for _, d := range p.cmd.Dirs() {
		dir := filepath.Join(t.Dir(), filepath.FromSlash(d))
		if !plainDirIn(t.Dir(), d) {
			continue
		}
		if _, err := os.Lstat(filepath.Join(dir, "go.mod")); err != nil {
			continue
		}
		if fi, err := os.Lstat(filepath.Join(dir, "vendor")); err == nil && fi.IsDir() {
			continue
		}
		out, err := p.runGo(ctx, dir, env, goModTimeout, "mod", verb)
		if d != "." && out != "" {
			out = d + ": " + out
		}
		if err != nil {
			if d != "." {
				err = fmt.Errorf("in %s: %w", d, err)
			}
			return out, err
		}
		if out != "" {
			outs = append(outs, out)
		}
	}
	return strings.Join(outs, "\n"), nil
}

// plainDirIn reports whether rel (slash-separated, relative) names a
// directory under root with no symbolic link on the way.
func plainDirIn(root, rel string) bool {
	if rel == "." {
		return true
	}
	cur := root
	for _, part := range strings.Split(rel, "/") {
		if part == "" || part == "." || part == ".." {
			return false
		}
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}

// runGo runs the harness's own go command (no sandbox) and returns its
// output; a failure, a timeout or a missing go is an error.
func (p *prover) runGo(ctx context.Context, dir string, env []string, timeout time.Duration, args ...string) (string, error) {
	name := "go " + strings.Join(args, " ")
	if p.goBin == "" {
		return "", fmt.Errorf("%s: go is not on PATH", name)
	}
	res, err := proc.Run(ctx, proc.Spec{Dir: dir, Argv: append([]string{p.goBin}, args...), Env: env,
		Timeout: timeout, MergeStderr: true})
	out := strings.TrimSpace(string(res.Stdout.Bytes()))
	switch {
	case err != nil:
		return out, fmt.Errorf("%s: %w", name, err)
	case res.TimedOut:
		return out, fmt.Errorf("%s: timed out after %s", name, timeout)
	case res.ExitCode != 0:
		return out, fmt.Errorf("%s: exit %d: %s", name, res.ExitCode, bounded(out, 1000))
	}
	return out, nil
}

// baseline reproduces the targets at the base commit and judges what it saw.
func (p *prover) baseline(ctx context.Context, targets []string) (*bundle.Baseline, error) {
	t, notes, err := p.checkout(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	fmt.Fprintf(p.r.Progress, "reproducing at %s on a clean checkout: %s\n", short(t.Commit()), targetList(targets))
	if p.depsErr != nil {
		notes = append(notes, "the workspace's installed dependencies could not be fingerprinted before the runs ("+oneLine(p.depsErr.Error())+"): a change to them during the run would go unseen")
	}
	readOnly := true
	if _, err := p.goMod(ctx, t, "download"); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		readOnly = false
		notes = append(notes, "the module's dependencies could not be downloaded before the runs ("+oneLine(err.Error())+"): the module cache stays writable")
	}
	ph, err := p.phaser(t, readOnly).run(ctx, t.Dir(), targets, BaselineRuns)
	if err != nil {
		return nil, err
	}
	bl := &bundle.Baseline{Commit: t.Commit(), Phase: ph.Phase, Environment: p.environment(ctx)}
	bl.Tree = t.BaseTree()
	bl.Notes = append(notes, bl.Notes...)
	for _, f := range ph.Failed {
		if !slices.ContainsFunc(targets, func(id string) bool { return sameTest(f, id) || id == FullCommandID }) {
			bl.PreExisting = append(bl.PreExisting, f)
		}
	}
	bl.Verdict = verdictOf(bl.Targets)
	return bl, nil
}

// verdictOf judges the targets' baseline records: reproduced when each
// target that failed failed on every run and at least one did; not
// reproduced when none failed; intermittent otherwise.
func verdictOf(targets []bundle.TestRecord) bundle.Verdict {
	if len(targets) == 0 {
		return bundle.VerdictNoTargets
	}
	failed, always := 0, true
	for _, t := range targets {
		if t.Failures > 0 {
			failed++
			always = always && t.Failures == t.Runs
		}
	}
	switch {
	case failed == 0:
		return bundle.VerdictNotReproduced
	case always:
		return bundle.VerdictReproduced
	}
	return bundle.VerdictIntermittent
}

// proofTargets are the baseline targets a fix must turn from failing to
// passing: those that failed at the base.
func proofTargets(bl *bundle.Baseline) []string {
	var out []string
	for _, t := range bl.Targets {
		if t.Failures > 0 {
			out = append(out, t.ID)
		}
	}
	return out
}

// prove builds the tree the change would publish on a clean checkout and
// runs there the targets, then the full command, caches off; it judges
// the result against the baseline.
func (p *prover) prove(ctx context.Context, bl *bundle.Baseline, changes []cleantree.Change) (*bundle.Proof, *phaseResult, error) {
	t, linkNotes, err := p.checkout(ctx, changes)
	if err != nil {
		return nil, nil, err
	}
	defer t.Close()
	tree, err := t.Hash(ctx, changes)
	if err != nil {
		return nil, nil, fmt.Errorf("the validated tree's id: %w", err)
	}
	fmt.Fprintf(p.r.Progress, "validating the published tree %s on a clean checkout\n", short(tree))
	proof := &bundle.Proof{}
	proof.Notes = linkNotes
	readOnly := true
	if _, err := p.goMod(ctx, t, "download"); err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		readOnly = false
		proof.Notes = append(proof.Notes, "the module's dependencies could not be downloaded before the runs ("+oneLine(err.Error())+")")
	}
	if out, err := p.goMod(ctx, t, "verify"); err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		proof.Tree = tree
		proof.Reasons = append(proof.Reasons, "the module cache does not verify before the runs: "+oneLine(err.Error()+" "+out))
		return proof, nil, nil
	}
	targets := proofTargets(bl)
	// As many narrowed runs as the baseline made, and the full command.
	runs := BaselineRuns
	ph, err := p.phaser(t, readOnly).run(ctx, t.Dir(), targets, runs)
	if err != nil {
		return nil, nil, err
	}
	proof.Phase = ph.Phase
	proof.Tree = tree
	proof.Notes = append(proof.Notes, ph.Notes...)
	if _, err := p.goMod(ctx, t, "verify"); err != nil && ctx.Err() == nil {
		// Test code rewrote a dependency during the runs.
		proof.Reasons = append(proof.Reasons, "the module cache does not verify after the runs (test code changed a dependency): "+oneLine(err.Error()))
	}
	if why := p.depsChanged(); why != "" {
		proof.Reasons = append(proof.Reasons, why)
	}
	judge(proof, bl, ph)
	return proof, ph, nil
}

// judge decides the proof: every target that failed at the base passes in
// every run after; the full command passes, or fails only by tests that
// failed at the base too.
func judge(proof *bundle.Proof, bl *bundle.Baseline, after *phaseResult) {
	for _, id := range proofTargets(bl) {
		a, _ := after.Target(id)
		switch {
		case a.Runs == 0:
			proof.Reasons = append(proof.Reasons, id+" did not run on the published tree (renamed, deleted or skipped?)")
		case a.Failures > 0:
			proof.Reasons = append(proof.Reasons, fmt.Sprintf("%s still fails on the published tree (%d of %d runs)", id, a.Failures, a.Runs))
		}
	}
	switch {
	case !after.FullRan:
		proof.Reasons = append(proof.Reasons, "the full test command did not run to an outcome")
	case after.FullPassed:
	case !after.failedKnown:
		proof.Reasons = append(proof.Reasons, fmt.Sprintf("the full test command failed (exit %d) and its output does not name the failing tests: new failures cannot be told from pre-existing ones", after.lastFull))
	case len(after.Failed) == 0:
		proof.Reasons = append(proof.Reasons, fmt.Sprintf("the full test command failed (exit %d) without a failing test", after.lastFull))
	default:
		for _, f := range after.Failed {
			if slices.ContainsFunc(bl.Failed, func(b string) bool { return b == f || sameTest(f, b) }) {
				continue
			}
			if slices.ContainsFunc(proofTargets(bl), func(id string) bool { return sameTest(f, id) }) {
				continue // a target's full-run failure is in its record: reported above
			}
			proof.NewFailures = append(proof.NewFailures, f)
		}
		if len(proof.NewFailures) > 0 {
			proof.Reasons = append(proof.Reasons, "tests that did not fail at the base fail on the published tree: "+strings.Join(proof.NewFailures, ", "))
		}
	}
	proof.Holds = len(proof.Reasons) == 0
}

// environment is what the harness can see of this machine, for a failure
// that does not reproduce here.
func (p *prover) environment(ctx context.Context) []string {
	out := []string{"os/arch: " + runtime.GOOS + "/" + runtime.GOARCH, fmt.Sprintf("cpus: %d", runtime.NumCPU())}
	if p.goBin != "" {
		if v, err := p.runGo(ctx, "", proc.AllowEnv(p.env, nil, p.r.SecretNames), 30*time.Second, "version"); err == nil {
			out = append(out, "go: "+v)
		}
	}
	for _, name := range []string{"RUNNER_OS", "RUNNER_ARCH", "ImageOS", "ImageVersion", "RUNNER_ENVIRONMENT"} {
		if v := lastEnvValue(p.env, name); v != "" {
			out = append(out, name+"="+bounded(v, 80))
		}
	}
	return out
}

func lastEnvValue(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}

func targetList(ids []string) string {
	if len(ids) == 0 {
		return "the full test command"
	}
	if len(ids) > 8 {
		return strings.Join(ids[:8], ", ") + fmt.Sprintf(" and %d more", len(ids)-8)
	}
	return strings.Join(ids, ", ")
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
