package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/internal/safefile"
)

// Limits of read_file. They keep one answer a small part of the model's
// context window however large or odd the file.
const (
	readDefaultLines   = 400
	readMaxLines       = 2000
	readMaxLineBytes   = 500
	readMaxAnswerBytes = 40 << 10
	readMaxFileBytes   = 10 << 20
	// readMaxRunLogBytes is larger than readMaxFileBytes: run logs are
	// written by run_test, and read_file streams them in bounded memory.
	readMaxRunLogBytes = 64 << 20
	// binarySniffBytes is how much of a file is checked for a NUL byte.
	binarySniffBytes = 8 << 10
	// readDirEntries is how many entries a "this is a directory" error lists.
	readDirEntries = 20
	// readTrailerReserve keeps room under readMaxAnswerBytes for the trailer.
	readTrailerReserve = 256
	readBufferBytes    = 64 << 10
)

// runsPathRE is the only shape of path read_file accepts under RunsPrefix.
var runsPathRE = regexp.MustCompile(`^@runs/([0-9]{1,9})\.log$`)

const readFileSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File path relative to the workspace root, e.g. \"internal/server/handler.go\", or \"@runs/N.log\" for the full output of the N-th run_test call."},
    "start_line": {"type": "integer", "minimum": 1, "description": "First line to show (1-based). Default 1."},
    "end_line": {"type": "integer", "minimum": 1, "description": "Last line to show (inclusive). Default start_line+399; at most 2000 lines per call."}
  },
  "required": ["path"],
  "additionalProperties": false
}`

const readFileDescription = `Read a text file from the workspace. Lines come numbered (1-based, "  12<TAB>text"); the numbers are not part of the file. ` +
	`Shows 400 lines by default and at most 2000 per call: pass start_line and end_line (inclusive) to page; when the answer is cut it says the total line count and the next range to ask for. ` +
	`Lines over 500 characters are cut. Binary files, files over 10 MiB and anything under .git are refused. ` +
	`"@runs/N.log" reads the full saved output of the N-th run_test call.`

// ReadFile is the read_file tool: numbered, windowed, bounded reads of
// workspace files and of saved run_test outputs.
type ReadFile struct {
	ws *Workspace
}

// NewReadFile returns the read_file tool over ws.
func NewReadFile(ws *Workspace) *ReadFile { return &ReadFile{ws: ws} }

// Spec describes read_file to the model.
func (r *ReadFile) Spec() agent.ToolSpec {
	return agent.ToolSpec{Name: "read_file", Description: readFileDescription, InputSchema: json.RawMessage(readFileSchema)}
}

// Mutates is false: read_file never changes the workspace.
func (r *ReadFile) Mutates() bool { return false }

type readFileParams struct {
	Path      string  `json:"path"`
	StartLine *intArg `json:"start_line"`
	EndLine   *intArg `json:"end_line"`
}

// Execute reads the requested window. Refusals and bad arguments are error
// results; only a cancelled context or a failing disk is a Go error.
func (r *ReadFile) Execute(ctx context.Context, args json.RawMessage) (agent.Result, error) {
	if err := ctx.Err(); err != nil {
		return agent.Result{}, err
	}
	var p readFileParams
	if err := decodeArgs(args, &p); err != nil {
		return invalidArgs("read_file", err, "path (string), start_line (integer, optional), end_line (integer, optional)"), nil
	}
	if strings.TrimSpace(p.Path) == "" {
		return agent.ErrorResult(agent.CodeInvalidArgument, `"path" is required: a file path relative to the workspace root`, true), nil
	}
	win, res := readWindow(p.StartLine, p.EndLine)
	if res != nil {
		return *res, nil
	}

	var (
		f     *os.File
		limit int64
	)
	if isRunsPath(p.Path) {
		f, res = r.openRunLog(p.Path)
		limit = readMaxRunLogBytes
	} else {
		f, res = r.openWorkspaceFile(ctx, p.Path)
		limit = readMaxFileBytes
	}
	if res != nil {
		return *res, nil
	}
	defer f.Close()
	return renderFile(ctx, f, p.Path, win, limit)
}

// lineWindow is the requested range of lines.
type lineWindow struct {
	start, end int
	clamped    bool // the request spanned more than readMaxLines
}

func readWindow(startArg, endArg *intArg) (lineWindow, *agent.Result) {
	fail := func(msg string) (lineWindow, *agent.Result) {
		res := agent.ErrorResult(agent.CodeInvalidArgument, msg, true)
		return lineWindow{}, &res
	}
	w := lineWindow{start: 1}
	if startArg != nil {
		w.start = int(*startArg)
		if w.start < 0 {
			return fail(fmt.Sprintf("start_line %d is invalid: lines are numbered from 1", w.start))
		}
		w.start = max(w.start, 1) // 0 has one sensible meaning: the first line
	}
	w.end = w.start + readDefaultLines - 1
	if endArg != nil {
		w.end = int(*endArg)
		if w.end < w.start {
			return fail(fmt.Sprintf("end_line %d is before start_line %d", w.end, w.start))
		}
		if w.end-w.start+1 > readMaxLines {
			w.end = w.start + readMaxLines - 1
			w.clamped = true
		}
	}
	return w, nil
}

func isRunsPath(p string) bool {
	p = strings.ReplaceAll(p, "\\", "/")
	return p == strings.TrimSuffix(RunsPrefix, "/") || strings.HasPrefix(p, RunsPrefix)
}

// openRunLog opens a saved run_test output. Only RunsPrefix + digits +
// ".log" is accepted, and only a regular file directly in the runs dir.
func (r *ReadFile) openRunLog(p string) (*os.File, *agent.Result) {
	fail := func(code, msg string) (*os.File, *agent.Result) {
		res := agent.ErrorResult(code, msg, true)
		return nil, &res
	}
	m := runsPathRE.FindStringSubmatch(strings.ReplaceAll(p, "\\", "/"))
	if m == nil {
		return fail(agent.CodeDenied, fmt.Sprintf("%q: under %s only saved run_test outputs are readable, as %sN.log with N the run number%s",
			p, RunsPrefix, RunsPrefix, r.availableRuns()))
	}
	n, _ := strconv.Atoi(m[1]) // at most 9 digits: always fits
	name := strconv.Itoa(n) + ".log"
	root, err := os.OpenRoot(r.ws.RunsDir())
	if err != nil {
		return fail(agent.CodeNotFound, fmt.Sprintf("%q: no run_test output has been saved yet", p))
	}
	defer root.Close()
	fi, err := root.Lstat(name)
	if err != nil {
		return fail(agent.CodeNotFound, fmt.Sprintf("%q: there is no saved output of run_test call %d%s", p, n, r.availableRuns()))
	}
	if !fi.Mode().IsRegular() {
		return fail(agent.CodeDenied, fmt.Sprintf("%q is not a regular file", p))
	}
	if fi.Size() > readMaxRunLogBytes {
		return fail(agent.CodeInvalidArgument, fmt.Sprintf("%q is %s, over the %s limit for run logs", p, byteSize(fi.Size()), byteSize(readMaxRunLogBytes)))
	}
	f, _, err := safefile.Open(root, name)
	if err != nil {
		return fail(agent.CodeNotFound, fmt.Sprintf("%q: %v", p, err))
	}
	return f, nil
}

// availableRuns lists the saved run logs for an error message.
func (r *ReadFile) availableRuns() string {
	entries, err := os.ReadDir(r.ws.RunsDir())
	if err != nil {
		return ""
	}
	var nums []int
	for _, e := range entries {
		if s, ok := strings.CutSuffix(e.Name(), ".log"); ok && e.Type().IsRegular() {
			if n, err := strconv.Atoi(s); err == nil && n >= 0 && strconv.Itoa(n) == s {
				nums = append(nums, n)
			}
		}
	}
	if len(nums) == 0 {
		return " (no run_test output has been saved yet)"
	}
	slices.Sort(nums)
	var b strings.Builder
	b.WriteString(" (available: ")
	for i, n := range nums[max(0, len(nums)-10):] {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s%d.log", RunsPrefix, n)
	}
	b.WriteString(")")
	return b.String()
}

// openWorkspaceFile resolves p through the sandbox and opens it, or returns
// the error result the model should read.
func (r *ReadFile) openWorkspaceFile(ctx context.Context, p string) (*os.File, *agent.Result) {
	fail := func(code, msg string) (*os.File, *agent.Result) {
		res := agent.ErrorResult(code, msg, code != agent.CodeDenied)
		return nil, &res
	}
	real, err := r.ws.Resolve(p)
	switch {
	case err == nil:
	case errors.Is(err, ErrOutside) || errors.Is(err, ErrForbidden) || errors.Is(err, fs.ErrPermission):
		return fail(agent.CodeDenied, err.Error())
	case errors.Is(err, syscall.ENOTDIR) || errors.Is(err, fs.ErrNotExist):
		return fail(agent.CodeNotFound, r.notFound(ctx, p))
	default:
		return fail(agent.CodeInvalidArgument, err.Error())
	}
	fi, err := r.ws.root.Stat(real)
	switch {
	case err == nil:
	case errors.Is(err, syscall.ENOTDIR) || errors.Is(err, fs.ErrNotExist):
		return fail(agent.CodeNotFound, r.notFound(ctx, p))
	case errors.Is(err, fs.ErrPermission):
		return fail(agent.CodeDenied, fmt.Sprintf("%q: permission denied", p))
	default:
		return fail(agent.CodeDenied, fmt.Sprintf("%q: %v", p, err))
	}
	if fi.IsDir() {
		return fail(agent.CodeInvalidArgument, r.dirMessage(p, real))
	}
	if !fi.Mode().IsRegular() {
		return fail(agent.CodeInvalidArgument, fmt.Sprintf("%q is not a regular file (%s)", p, fi.Mode().Type()))
	}
	if fi.Size() > readMaxFileBytes {
		return fail(agent.CodeInvalidArgument, fmt.Sprintf("%q is %s, over the %s read_file limit; use search to find the lines you need",
			p, byteSize(fi.Size()), byteSize(readMaxFileBytes)))
	}
	// Non-blocking, no-follow, and a regular file on the open descriptor:
	// a FIFO or a symlink swapped in since the checks above is refused,
	// never waited on.
	f, fi, err := safefile.Open(r.ws.root, real)
	switch {
	case errors.Is(err, safefile.ErrNotRegular):
		return fail(agent.CodeInvalidArgument, fmt.Sprintf("%q is not a regular file (it changed while being opened)", p))
	case err != nil:
		return fail(agent.CodeDenied, fmt.Sprintf("%q: %v", p, err))
	case fi.Size() > readMaxFileBytes:
		f.Close()
		return fail(agent.CodeInvalidArgument, fmt.Sprintf("%q is %s, over the %s read_file limit; use search to find the lines you need",
			p, byteSize(fi.Size()), byteSize(readMaxFileBytes)))
	}
	return f, nil
}

func (r *ReadFile) notFound(ctx context.Context, p string) string {
	msg := fmt.Sprintf("%q does not exist", p)
	if s := r.ws.suggest(ctx.Done(), p); len(s) > 0 {
		return msg + "; did you mean: " + strings.Join(quoteNames(s), ", ") + "?"
	}
	return msg + " (no similar path found; use search to locate files)"
}

func (r *ReadFile) dirMessage(p, real string) string {
	entries, err := fs.ReadDir(safefile.FS(r.ws.root), real)
	if err != nil {
		return fmt.Sprintf("%q is a directory; pass a file path", p)
	}
	var names []string
	for _, e := range entries {
		if strings.EqualFold(e.Name(), ".git") {
			continue
		}
		n := quoteName(e.Name())
		if e.IsDir() {
			n += "/"
		}
		names = append(names, n)
	}
	total := len(names)
	if len(names) > readDirEntries {
		names = append(names[:readDirEntries], fmt.Sprintf("... (%d more)", total-readDirEntries))
	}
	return fmt.Sprintf("%q is a directory with %d entries: %s. Pass a file path, e.g. %q",
		p, total, strings.Join(names, ", "), path.Join(real, firstFile(entries)))
}

func firstFile(entries []fs.DirEntry) string {
	for _, e := range entries {
		if e.Type().IsRegular() {
			return e.Name()
		}
	}
	return "FILE"
}
