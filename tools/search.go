package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/org/mini-agent/agent"
)

// Limits of search.
const (
	searchDefaultResults = 50
	searchMaxResults     = 500
	searchMaxLineBytes   = 300
	// searchMaxFileBytes skips generated and data files: matches in them
	// rarely help and reading them costs the most.
	searchMaxFileBytes = 1 << 20
	// searchMaxWorkers bounds the goroutines reading files.
	searchMaxWorkers = 16
)

const searchSchema = `{
  "type": "object",
  "properties": {
    "query": {"type": "string", "description": "RE2 regular expression (Go syntax), matched against each line, e.g. \"func \\\\w+Handler\\\\(\" or \"(?i)timeout\"."},
    "path": {"type": "string", "description": "Optional: a folder (\"internal/\"), a file, or a glob (\"**/*_test.go\", \"src/**/*.{ts,tsx}\"; a glob without \"/\" such as \"*.go\" matches file names in every folder)."},
    "max_results": {"type": "integer", "minimum": 1, "maximum": 500, "description": "Matching lines to show, default 50, at most 500."}
  },
  "required": ["query"],
  "additionalProperties": false
}`

const searchDescription = `Search the contents of the workspace's files with an RE2 regular expression (Go syntax), line by line; use (?i) to ignore case. ` +
	`Covers tracked and untracked files and respects .gitignore; binary files and files over 1 MiB are skipped. ` +
	`Answers "path:line: text", sorted by path then line, 50 lines by default (max_results up to 500), saying how many more matched. ` +
	`Narrow with path: a folder, a file, or a glob.`

// Search is the search tool: a parallel regexp search over the workspace's
// searchable files.
type Search struct {
	ws *Workspace
}

// NewSearch returns the search tool over ws.
func NewSearch(ws *Workspace) *Search { return &Search{ws: ws} }

// Spec describes search to the model.
func (s *Search) Spec() agent.ToolSpec {
	return agent.ToolSpec{Name: "search", Description: searchDescription, InputSchema: json.RawMessage(searchSchema)}
}

// Mutates is false: search never changes the workspace.
func (s *Search) Mutates() bool { return false }

type searchParams struct {
	Query      string  `json:"query"`
	Path       string  `json:"path"`
	MaxResults *intArg `json:"max_results"`
}

// Execute runs one search. Bad arguments and refused paths are error
// results; only a cancelled context or a failing listing is a Go error.
func (s *Search) Execute(ctx context.Context, args json.RawMessage) (agent.Result, error) {
	if err := ctx.Err(); err != nil {
		return agent.Result{}, err
	}
	var p searchParams
	if err := decodeArgs(args, &p); err != nil {
		return invalidArgs("search", err, "query (string), path (string, optional), max_results (integer, optional)"), nil
	}
	if p.Query == "" {
		return agent.ErrorResult(agent.CodeInvalidArgument, `"query" is required: an RE2 regular expression`, true), nil
	}
	m, err := newMatcher(p.Query)
	if err != nil {
		return agent.ErrorResult(agent.CodeInvalidArgument,
			fmt.Sprintf("invalid regular expression %q: %v (RE2 syntax: no lookaround or backreferences; escape ( ) [ ] { } . * + ? | \\ to match them literally)", p.Query, err), true), nil
	}
	limit := searchDefaultResults
	if p.MaxResults != nil {
		switch n := int(*p.MaxResults); {
		case n < 0:
			return agent.ErrorResult(agent.CodeInvalidArgument, fmt.Sprintf("max_results %d is invalid: give 1 to %d", n, searchMaxResults), true), nil
		case n > 0:
			limit = min(n, searchMaxResults)
		}
	}
	filter, res := s.pathFilter(ctx, p.Path)
	if res != nil {
		return *res, nil
	}
	// A file named explicitly is searched even if .gitignore excludes it.
	kept := []string{filter.file}
	if filter.file == "" {
		// The listing is cached and shared: filter into a new slice.
		files, err := s.ws.cachedListFiles(ctx)
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return agent.Result{}, ctxErr
			}
			return agent.Result{}, fmt.Errorf("search: %w", err)
		}
		kept = files
		if filter.prefix != "" || filter.globs != nil {
			kept = nil
			for _, f := range files {
				if filter.match(f) {
					kept = append(kept, f)
				}
			}
		}
	}
	out, err := s.ws.searchFiles(ctx, m, kept, limit)
	if err != nil {
		return agent.Result{}, err
	}
	return agent.Result{Text: out.render(p.Query, filter, limit)}, nil
}

// searchHit is one matching line kept for the answer.
type searchHit struct {
	line int
	text string
}

// fileResult is what searching one file found.
type fileResult struct {
	count int         // matching lines
	hits  []searchHit // the first of them, when the file may be shown
}

// searchOutcome collects a whole search.
type searchOutcome struct {
	files   []string
	results []fileResult
	binary  int // files skipped as binary
	large   int // files skipped as over searchMaxFileBytes
}

// searchFiles searches files (sorted) in parallel. Results are stored by
// file index, so the answer's order does not depend on scheduling; the
// cutoff keeps only the hits that can still be shown, bounding memory
// however many lines match.
func (w *Workspace) searchFiles(ctx context.Context, m *matcher, files []string, limit int) (*searchOutcome, error) {
	out := &searchOutcome{files: files, results: make([]fileResult, len(files))}
	groups := groupByDir(files)
	prog := newProgress(len(files), limit)
	dirs := newDirOpener(w.root)
	defer dirs.close()

	var (
		next          atomic.Int64
		binary, large atomic.Int64
		wg            sync.WaitGroup
	)
	workers := min(runtime.GOMAXPROCS(0)*2, searchMaxWorkers, max(len(groups), 1))
	for range workers {
		wg.Go(func() {
			var buf []byte
			for ctx.Err() == nil {
				g := int(next.Add(1)) - 1
				if g >= len(groups) {
					return
				}
				buf = w.searchGroup(ctx, m, groups[g], files, out.results, prog, dirs, buf, &binary, &large)
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out.binary, out.large = int(binary.Load()), int(large.Load())
	return out, nil
}

// dirGroup is the files of one directory, by index into the sorted list.
type dirGroup struct {
	dir   string // "" for the workspace root
	files []int
}

func groupByDir(files []string) []dirGroup {
	var groups []dirGroup
	index := map[string]int{}
	for i, f := range files {
		dir, _ := path.Split(f)
		g, ok := index[dir]
		if !ok {
			g = len(groups)
			index[dir] = g
			groups = append(groups, dirGroup{dir: dir})
		}
		groups[g].files = append(groups[g].files, i)
	}
	return groups
}

// searchGroup searches one directory's files through a handle on that
// directory opened via the workspace Root, so each file costs a few system
// calls whatever its depth. It returns buf, possibly grown, for reuse.
func (w *Workspace) searchGroup(ctx context.Context, m *matcher, g dirGroup, files []string, results []fileResult,
	prog *progress, dirs *dirOpener, buf []byte, binary, large *atomic.Int64) []byte {
	dir := strings.TrimSuffix(g.dir, "/")
	if dir == "" {
		dir = "."
	}
	// A directory that is, or lies under, a symlink is not searched
	// through it: the link could lead into .git or out of the tree.
	d, err := dirs.open(dir)
	if err != nil {
		prog.skip(g.files)
		return buf
	}
	defer d.close()
	for _, i := range g.files {
		if ctx.Err() != nil {
			return buf
		}
		var res fileResult
		data, status := d.read(path.Base(files[i]), buf)
		if cap(data) > cap(buf) {
			buf = data[:0]
		}
		switch status {
		case fileBinary:
			binary.Add(1)
		case fileLarge:
			large.Add(1)
		case fileOK:
			res = searchBuffer(m, data, prog.keep(i))
		}
		results[i] = res
		prog.done(i, res.count)
	}
	return buf
}

// searchBuffer finds the matching lines of data, keeping up to keep hits.
func searchBuffer(m *matcher, data []byte, keep int) fileResult {
	var res fileResult
	line, pos := 1, 0
	m.scan(data, func(s lineSpan) bool {
		res.count++
		if len(res.hits) < keep {
			line += bytes.Count(data[pos:s.start], []byte{'\n'})
			pos = s.start
			res.hits = append(res.hits, searchHit{line: line, text: cutSearchLine(data[s.start:s.end])})
		}
		return true
	})
	return res
}

// cutSearchLine renders a matching line: CR dropped, cut at
// searchMaxLineBytes on a rune boundary, invalid UTF-8 replaced.
func cutSearchLine(b []byte) string {
	b = bytes.TrimSuffix(b, []byte{'\r'})
	cut := false
	if len(b) > searchMaxLineBytes {
		i := searchMaxLineBytes
		for i > 0 && !utf8.RuneStart(b[i]) {
			i--
		}
		b, cut = b[:i], true
	}
	s := string(b)
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if cut {
		s += " [...]"
	}
	return s
}

// progress tracks which files are done, to know when the hits already
// found in the leading files fill the answer: later files then only count.
type progress struct {
	limit  int
	cutoff atomic.Int64 // files at or after this index keep no hits

	mu     sync.Mutex
	isDone []bool
	counts []int
	prefix int // files [0, prefix) are all done
	sum    int // matching lines in them
}

func newProgress(n, limit int) *progress {
	p := &progress{limit: limit, isDone: make([]bool, n), counts: make([]int, n)}
	p.cutoff.Store(int64(n))
	return p
}

// keep returns how many hits file i may keep.
func (p *progress) keep(i int) int {
	if int64(i) >= p.cutoff.Load() {
		return 0
	}
	return p.limit
}

func (p *progress) done(i, count int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.isDone[i], p.counts[i] = true, count
	for p.prefix < len(p.isDone) && p.isDone[p.prefix] {
		p.sum += p.counts[p.prefix]
		p.prefix++
		if p.sum >= p.limit && int64(p.prefix) < p.cutoff.Load() {
			p.cutoff.Store(int64(p.prefix))
		}
	}
}

func (p *progress) skip(files []int) {
	for _, i := range files {
		p.done(i, 0)
	}
}

// render formats the answer: hits in path and line order, then a summary.
func (o *searchOutcome) render(query string, f searchFilter, limit int) string {
	var b strings.Builder
	shown, total, filesWith := 0, 0, 0
	for i, r := range o.results {
		if r.count == 0 {
			continue
		}
		total += r.count
		filesWith++
		for _, h := range r.hits {
			if shown == limit {
				break
			}
			fmt.Fprintf(&b, "%s:%d: %s\n", quoteName(o.files[i]), h.line, h.text)
			shown++
		}
	}
	var notes []string
	if total == 0 {
		where := fmt.Sprintf("%d files", len(o.files))
		if f.desc != "" {
			where += fmt.Sprintf(" matching path %q", f.desc)
		}
		msg := fmt.Sprintf("no matches for %q in %s", query, where)
		if len(o.files) == 0 && f.prefix != "" {
			msg += " (the folder holds no searchable file: all ignored by .gitignore?)"
		}
		notes = append(notes, msg)
	} else if total > shown {
		notes = append(notes, fmt.Sprintf("[%d more matches not shown: %d matching lines in %d files; narrow the query or path, or raise max_results (up to %d)]",
			total-shown, total, filesWith, searchMaxResults))
	}
	var skipped []string
	if o.binary > 0 {
		skipped = append(skipped, fmt.Sprintf("%d binary files", o.binary))
	}
	if o.large > 0 {
		skipped = append(skipped, fmt.Sprintf("%d files over %s", o.large, byteSize(searchMaxFileBytes)))
	}
	if len(skipped) > 0 {
		notes = append(notes, "[skipped "+strings.Join(skipped, " and ")+"]")
	}
	for _, n := range notes {
		b.WriteString(n)
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}
