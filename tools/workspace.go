// Package tools implements the four tools the model may call (read_file,
// search, apply_patch, run_test) over a sandboxed workspace. It knows neither
// GitHub nor models; it uses only the loop's small protocol types.
package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/internal/protect"
	"github.com/org/mini-agent/internal/safefile"
)

// RunsPrefix is the pseudo-path under which read_file pages the full saved
// output of earlier run_test calls: "@runs/3.log" is the third call's output.
const RunsPrefix = "@runs/"

// maxSymlinkHops bounds symlink resolution, as the kernel does.
const maxSymlinkHops = 40

// ErrOutside is returned for any path that leaves the workspace.
var ErrOutside = errors.New("path is outside the workspace")

// ErrForbidden is returned for paths inside the workspace that the sandbox
// refuses anyway: anything under a `.git` directory (read or write) and, for
// writes, paths matching a protected glob.
var ErrForbidden = errors.New("path is off limits")

// Workspace is the sandbox every tool works through. Paths from the model
// are workspace-relative; absolute paths, `..` and symlinks that leave the
// workspace are refused, and `.git/` is never read or written (actions/checkout
// keeps the token in .git/config).
type Workspace struct {
	dir       string
	root      *os.Root
	protected *protect.Set
	runsDir   string
	ownsRuns  bool // a temporary runs dir, removed by Close
}

// WorkspaceOptions configure OpenWorkspace.
type WorkspaceOptions struct {
	// Protected paths are refused for writes; nil means protect.Default().
	Protected *protect.Set
	// RunsDir is where run_test saves full outputs. It must be outside the
	// workspace so saved logs never appear in the diff. Empty means a fresh
	// temporary directory, removed by Close.
	RunsDir string
}

// OpenWorkspace opens dir as a sandboxed workspace.
func OpenWorkspace(dir string, opt WorkspaceOptions) (*Workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open workspace: %w", err)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("open workspace: %w", err)
	}
	w := &Workspace{dir: abs, root: root, protected: opt.Protected, runsDir: opt.RunsDir}
	if w.protected == nil {
		w.protected = protect.Default()
	}
	if w.runsDir == "" {
		d, err := os.MkdirTemp("", "mini-agent-runs-")
		if err != nil {
			root.Close()
			return nil, fmt.Errorf("open workspace: runs dir: %w", err)
		}
		w.runsDir, w.ownsRuns = d, true
	} else if err := os.MkdirAll(w.runsDir, 0o755); err != nil {
		root.Close()
		return nil, fmt.Errorf("open workspace: runs dir: %w", err)
	}
	if rel, err := filepath.Rel(abs, w.runsDir); err == nil && !strings.HasPrefix(rel, "..") {
		root.Close()
		return nil, fmt.Errorf("open workspace: runs dir %s is inside the workspace", w.runsDir)
	}
	return w, nil
}

// Close releases the root handle and removes a temporary runs dir.
func (w *Workspace) Close() error {
	err := w.root.Close()
	if w.ownsRuns {
		os.RemoveAll(w.runsDir)
	}
	return err
}

// Dir is the workspace's absolute directory.
func (w *Workspace) Dir() string { return w.dir }

// Root is the os.Root all file access goes through.
func (w *Workspace) Root() *os.Root { return w.root }

// FS is the workspace as an fs.FS whose opens never block and never follow
// a symlink at the last component, and that reads regular files only (a
// FIFO swapped in by code under test is refused): for engines that read
// through fs.FS (the patch engine).
func (w *Workspace) FS() fs.FS { return safefile.FS(w.root) }

// RunsDir is the directory (outside the workspace) holding run_test logs.
func (w *Workspace) RunsDir() string { return w.runsDir }

// Protected returns the set of paths refused for writes.
func (w *Workspace) Protected() *protect.Set { return w.protected }

// Clean validates a model-supplied path and returns it slash-separated and
// cleaned. "." names the workspace itself.
func Clean(p string) (string, error) {
	if p == "" {
		return "", errors.New("empty path")
	}
	if strings.ContainsRune(p, 0) {
		return "", errors.New("path contains a NUL byte")
	}
	p = strings.ReplaceAll(p, "\\", "/")
	if strings.HasPrefix(p, "/") || filepath.IsAbs(p) || (len(p) > 1 && p[1] == ':') {
		return "", fmt.Errorf("%q: absolute paths are refused; use a path relative to the workspace: %w", p, ErrOutside)
	}
	p = strings.TrimPrefix(p, "./")
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return "", fmt.Errorf("%q: '..' is refused: %w", p, ErrOutside)
		}
	}
	return path.Clean(p), nil
}

// Resolve cleans p and follows symlinks inside the workspace, returning the
// real workspace-relative path. A link that points outside, or into .git,
// is refused. Missing trailing components are allowed (for creates).
func (w *Workspace) Resolve(p string) (string, error) {
	clean, err := Clean(p)
	if err != nil {
		return "", err
	}
	var done []string
	todo := splitPath(clean)
	hops := 0
	for len(todo) > 0 {
		seg := todo[0]
		todo = todo[1:]
		cand := path.Join(append(append([]string{}, done...), seg)...)
		fi, err := w.root.Lstat(cand)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				done = append(done, seg)
				done = append(done, todo...)
				break
			}
			return "", fmt.Errorf("%q: %w", p, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			done = append(done, seg)
			continue
		}
		hops++
		if hops > maxSymlinkHops {
			return "", fmt.Errorf("%q: too many symlinks", p)
		}
		target, err := w.root.Readlink(cand)
		if err != nil {
			return "", fmt.Errorf("%q: %w", p, err)
		}
		if path.IsAbs(target) || filepath.IsAbs(target) {
			return "", fmt.Errorf("%q is a symlink to an absolute path: %w", p, ErrOutside)
		}
		joined := path.Join(path.Join(done...), target)
		if joined == ".." || strings.HasPrefix(joined, "../") {
			return "", fmt.Errorf("%q is a symlink that leaves the workspace: %w", p, ErrOutside)
		}
		done = nil
		todo = append(splitPath(joined), todo...)
	}
	real := path.Join(done...)
	if real == "" {
		real = "."
	}
	if isGitPath(real) {
		return "", fmt.Errorf("%q: the .git directory is off limits: %w", p, ErrForbidden)
	}
	return real, nil
}

// CheckWrite resolves p for writing: everything Resolve refuses, plus
// protected globs on both the given and the real path.
func (w *Workspace) CheckWrite(p string) (string, error) {
	clean, err := Clean(p)
	if err != nil {
		return "", err
	}
	if isGitPath(clean) {
		return "", fmt.Errorf("%q: writes to .git are always refused: %w", p, ErrForbidden)
	}
	real, err := w.Resolve(clean)
	if err != nil {
		return "", err
	}
	if real == "." {
		return "", fmt.Errorf("%q: cannot write the workspace root", p)
	}
	for _, c := range []string{clean, real} {
		// Ignoring case: on macOS and Windows file systems
		// ".GITHUB/workflows/x.yml" is .github/workflows/x.yml.
		if g, ok := w.protected.Match(c); ok {
			return "", fmt.Errorf("%q is protected by policy (%s): %w", p, g, ErrForbidden)
		}
	}
	return real, nil
}

func splitPath(p string) []string {
	if p == "." || p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// isGitPath reports whether any segment of the slash-separated path p is a
// `.git` entry, ignoring case (protect.InGit): such paths are never read
// either.
func isGitPath(p string) bool { return protect.InGit(p) }

// Limits of Suggest: it runs on the error path of a tool call, so its work
// is bounded however large the workspace.
const (
	maxSuggestions = 5
	// maxSuggestScan bounds the entries visited looking for candidates.
	maxSuggestScan = 50_000
)

// Suggest returns up to five existing files whose path is nearest to p, a
// path that does not exist: same name in another directory first, then
// names within a small edit distance. It answers "did you mean ..." for
// read_file and apply_patch. Ignored files and `.git` are not considered.
func (w *Workspace) Suggest(p string) []string {
	return w.suggest(nil, p)
}

// suggest is Suggest stopping early when done closes.
func (w *Workspace) suggest(done <-chan struct{}, p string) []string {
	p = strings.TrimPrefix(strings.ReplaceAll(p, "\\", "/"), "./")
	p = strings.ToLower(path.Clean(p))
	if p == "." || p == "" {
		return nil
	}
	qDir, qBase := path.Split(p)
	qDir = strings.TrimSuffix(qDir, "/")
	qStem := strings.TrimSuffix(qBase, path.Ext(qBase))
	baseLimit := max(2, len(qBase)/3)
	pathLimit := max(2, len(p)/4)

	type cand struct {
		path  string
		score int
	}
	var cands []cand
	walkTree(done, w.root, maxSuggestScan, func(rel string, d fs.DirEntry) error {
		if d.IsDir() {
			return nil
		}
		low := strings.ToLower(rel)
		cDir, cBase := path.Split(low)
		cDir = strings.TrimSuffix(cDir, "/")
		score := -1
		switch {
		case low == p:
			score = 0 // differs only in case
		case cBase == qBase:
			score = 100 + editDistance(qDir, cDir, 99)
		default:
			if d := editDistance(qBase, cBase, baseLimit); d <= baseLimit {
				score = 200 + 10*d + min(editDistance(qDir, cDir, 9), 9)
			} else if d := editDistance(p, low, pathLimit); d <= pathLimit {
				score = 400 + 10*d
			} else if len(qStem) >= 3 && strings.HasPrefix(cBase, qStem) {
				score = 500 + len(cBase) - len(qStem)
			}
		}
		if score >= 0 {
			cands = append(cands, cand{rel, score})
		}
		return nil
	})
	slices.SortFunc(cands, func(a, b cand) int {
		if a.score != b.score {
			return a.score - b.score
		}
		return strings.Compare(a.path, b.path)
	})
	out := make([]string, 0, min(len(cands), maxSuggestions))
	for i := 0; i < len(cands) && i < maxSuggestions; i++ {
		out = append(out, cands[i].path)
	}
	return out
}

// editDistance is the Levenshtein distance between a and b in bytes, or any
// value above limit once the distance is known to exceed limit.
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d > limit || -d > limit {
		return limit + 1
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			rowMin = min(rowMin, cur[j])
		}
		if rowMin > limit {
			return limit + 1
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Argument decoding shared by the tools.

// intArg is an integer argument that also accepts the forms models often
// send instead: a numeric string ("12") or an integral float (12.0).
type intArg int

// UnmarshalJSON implements json.Unmarshaler.
func (a *intArg) UnmarshalJSON(b []byte) error {
	s := string(bytes.TrimSpace(b))
	if uq, err := strconv.Unquote(s); err == nil && len(s) > 0 && s[0] == '"' {
		s = strings.TrimSpace(uq)
	}
	if n, err := strconv.Atoi(s); err == nil {
		*a = intArg(n)
		return nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && f == float64(int(f)) {
		*a = intArg(int(f))
		return nil
	}
	return fmt.Errorf("expected an integer, got %s", b)
}

// decodeArgs decodes a tool's JSON arguments into v strictly: unknown fields
// and trailing data are errors. Missing or null arguments decode as {}, and
// arguments double-encoded as a JSON string are unwrapped.
func decodeArgs(args json.RawMessage, v any) error {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		args = []byte("{}")
	}
	if args[0] == '"' {
		var inner string
		if err := json.Unmarshal(args, &inner); err == nil {
			args = []byte(strings.TrimSpace(inner))
		}
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("unexpected data after the JSON object")
	}
	return nil
}

// invalidArgs is the error result for arguments that do not decode.
func invalidArgs(tool string, err error, want string) agent.Result {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "json: ")
	return agent.ErrorResult(agent.CodeInvalidArgument,
		fmt.Sprintf("invalid %s arguments: %s; expected a JSON object with %s", tool, msg, want), true)
}
