package failure

import (
	"bufio"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// splitLoc splits "path:line[:col]" into the path and ":line[:col]".
func splitLoc(loc string) (string, string) {
	i := strings.LastIndexByte(loc, ':')
	if i <= 0 || !allDigits(loc[i+1:]) {
		return "", ""
	}
	if j := strings.LastIndexByte(loc[:i], ':'); j > 0 && allDigits(loc[j+1:i]) {
		i = j
	}
	return loc[:i], loc[i:]
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// sourceExts are the extensions findLoc accepts as source files.
var sourceExts = map[string]bool{
	".go": true, ".py": true, ".js": true, ".mjs": true, ".cjs": true, ".ts": true, ".tsx": true,
	".jsx": true, ".mts": true, ".cts": true, ".rs": true, ".java": true, ".kt": true, ".rb": true,
	".c": true, ".h": true, ".cc": true, ".cpp": true, ".cs": true, ".php": true, ".swift": true,
	".vue": true, ".svelte": true,
}

// project decides which files belong to the project under repair and
// which to the toolchain or a dependency. It knows the workspace (its
// absolute path) and, for Go, the module path from its go.mod; a nil
// project knows neither and decides from the path alone.
type project struct {
	ws     string // absolute workspace path, slash-separated, "" if unknown
	module string // Go module path of the workspace, "" if none
}

// newProject returns the project of workspace ws (which may be "").
func newProject(ws string) *project {
	p := &project{}
	if ws == "" {
		return p
	}
	if abs, err := filepath.Abs(ws); err == nil {
		p.ws = filepath.ToSlash(abs)
		p.module = goModule(filepath.Join(abs, "go.mod"))
	}
	return p
}

// findLocs returns the "file:line[:col]" tokens of s that name a source
// file, in order, skipping runtime and dependency frames.
func (p *project) findLocs(s string) []string {
	var out []string
	for i := 0; i < len(s); i++ {
		if s[i] != ':' || i+1 >= len(s) || !isDigit(s[i+1]) {
			continue
		}
		start := i
		for start > 0 && isPathByte(s[start-1]) {
			start--
		}
		end := i + 1
		for end < len(s) && isDigit(s[end]) {
			end++
		}
		if end+1 < len(s) && s[end] == ':' && isDigit(s[end+1]) {
			end++
			for end < len(s) && isDigit(s[end]) {
				end++
			}
		}
		file := strings.TrimPrefix(s[start:i], "file://")
		if sourceExts[path.Ext(file)] && !p.foreign(file) {
			out = append(out, strings.TrimPrefix(s[start:end], "file://"))
		}
		i = end - 1
	}
	return out
}

func isPathByte(c byte) bool {
	return c > ' ' && c != '(' && c != ')' && c != '\'' && c != '"' && c != '`' && c != '[' && c != ']' &&
		c != '<' && c != '>' && c != ','
}

// foreign reports whether file belongs to a toolchain or a dependency
// rather than to the project. Dependencies (node_modules, the Go module
// cache, cargo's registry, site-packages) are foreign wherever they are;
// otherwise a file inside the workspace or a runner's checkout is the
// project's own, whatever its path looks like (a GOPATH checkout lives
// under /go/src/); of the rest, a Go toolchain source (GOROOT/src/<std
// package>/...), Rust's and Python's standard libraries are foreign.
func (p *project) foreign(file string) bool {
	if strings.HasPrefix(file, "node:") || strings.Contains(file, "node_modules/") ||
		strings.Contains(file, "/pkg/mod/") || strings.Contains(file, "/.cargo/registry/") ||
		strings.Contains(file, "/site-packages/") || strings.Contains(file, "/dist-packages/") {
		return true
	}
	if p != nil && p.ws != "" && strings.HasPrefix(file, p.ws+"/") {
		return false
	}
	if _, ok := runnerRel(file); ok {
		return false
	}
	return isGoRootFile(file) || strings.HasPrefix(file, "/rustc/") ||
		strings.Contains(file, "/lib/python3") ||
		strings.HasPrefix(file, "internal/") || strings.HasPrefix(file, "_testmain.go")
}

// goStdDirs are the top-level directories of GOROOT/src.
var goStdDirs = map[string]bool{
	"archive": true, "bufio": true, "builtin": true, "bytes": true, "cmd": true, "cmp": true,
	"compress": true, "container": true, "context": true, "crypto": true, "database": true,
	"debug": true, "embed": true, "encoding": true, "errors": true, "expvar": true, "flag": true,
	"fmt": true, "go": true, "hash": true, "html": true, "image": true, "index": true,
	"internal": true, "io": true, "iter": true, "log": true, "maps": true, "math": true,
	"mime": true, "net": true, "os": true, "path": true, "plugin": true, "reflect": true,
	"regexp": true, "runtime": true, "slices": true, "sort": true, "strconv": true,
	"strings": true, "structs": true, "sync": true, "syscall": true, "testing": true, "text": true,
	"time": true, "unicode": true, "unique": true, "unsafe": true, "vendor": true, "weak": true,
}

// isGoRootFile reports whether file is a Go toolchain source: an absolute
// path ".../src/<standard package>/...". A GOPATH project's own files
// (/go/src/app/..., /go/src/github.com/org/repo/...) are not.
func isGoRootFile(file string) bool {
	if !strings.HasPrefix(file, "/") && !(len(file) > 2 && file[1] == ':') {
		return false
	}
	rest := file
	for {
		i := strings.Index(rest, "/src/")
		if i < 0 {
			return false
		}
		rest = rest[i+len("/src/"):]
		if dir, _, ok := strings.Cut(rest, "/"); ok && goStdDirs[dir] {
			return true
		}
	}
}

// firstLoc is the first project location in s, or "".
func (p *project) firstLoc(s string) string {
	if l := p.findLocs(s); len(l) > 0 {
		return l[0]
	}
	return ""
}

// normalizer makes locations relative to the workspace.
type normalizer struct {
	ws     string
	module string
	exists map[string]bool
	// nested are the Go modules below the workspace's root (a module in
	// sub/, run with go -C sub test), found when first needed.
	nested     []nestedModule
	nestedRead bool
}

// nestedModule is a Go module in a directory of the workspace.
type nestedModule struct{ path, dir string }

// Bounds of the walk for nested Go modules (the repository is untrusted).
const (
	maxModuleDepth = 4
	maxModuleDirs  = 2000
)

func newNormalizer(ws string) *normalizer {
	n := &normalizer{exists: map[string]bool{}}
	if ws == "" {
		return n
	}
	if abs, err := filepath.Abs(ws); err == nil {
		n.ws = abs
	}
	n.module = goModule(filepath.Join(n.ws, "go.mod"))
	return n
}

// goModule reads the module path from a go.mod file ("" if none).
func goModule(file string) string {
	f, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

func (n *normalizer) apply(fc *FailureContext) {
	for i := range fc.Failures {
		f := &fc.Failures[i]
		f.Location = n.loc(f.Location, f.Package)
		if strings.HasPrefix(f.Package, "/") || strings.HasPrefix(f.Package, "file://") {
			f.Package = n.path(f.Package, "")
		}
	}
	for i := range fc.BuildErrors {
		b := &fc.BuildErrors[i]
		b.Location = n.loc(b.Location, "")
	}
}

// loc rewrites one location; pkg is the Go import path when known.
func (n *normalizer) loc(loc, pkg string) string {
	p, suffix := splitLoc(loc)
	if p == "" {
		return loc
	}
	return n.path(p, pkg) + suffix
}

func (n *normalizer) path(p, pkg string) string {
	p = strings.TrimPrefix(p, "file://")
	if len(p) > 2 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') {
		p = strings.ReplaceAll(p, `\`, "/") // Windows runner path
	}
	if strings.HasPrefix(p, "/") || (len(p) > 2 && p[1] == ':') {
		return n.abs(p)
	}
	for strings.HasPrefix(p, "./") {
		p = p[2:]
	}
	if n.ws != "" && n.module != "" && !strings.Contains(p, "/") && !n.has(p) {
		// go test prints a test's file name relative to its package.
		if dir, ok := strings.CutPrefix(pkg, n.module); ok && (dir == "" || dir[0] == '/') {
			if cand := path.Join(strings.TrimPrefix(dir, "/"), p); n.has(cand) {
				return cand
			}
		}
	}
	if n.ws != "" && pkg != "" && !strings.Contains(p, "/") && !n.has(p) {
		// A module below the root (go -C sub test): its directory, then
		// the package's within it.
		if cand := n.inNested(pkg, p); cand != "" {
			return cand
		}
	}
	if n.ws != "" && n.module == "" && pkg != "" && !strings.Contains(p, "/") && !n.has(p) && !strings.Contains(pkg, " ") {
		// No module path to go by (GOPATH mode: import path "app/calc" in
		// /go/src/app): the longest tail of the import path that holds
		// the file.
		parts := strings.Split(pkg, "/")
		for i := range parts {
			if cand := path.Join(path.Join(parts[i:]...), p); n.has(cand) {
				return cand
			}
		}
	}
	return p
}

// inNested returns the workspace path of file p of Go package pkg when pkg
// is in a module below the workspace's root and the file is there, else "".
func (n *normalizer) inNested(pkg, p string) string {
	if !n.nestedRead {
		n.nestedRead = true
		n.nested = findModules(n.ws)
	}
	best := -1
	for i, m := range n.nested {
		if (pkg == m.path || strings.HasPrefix(pkg, m.path+"/")) && (best < 0 || len(m.path) > len(n.nested[best].path)) {
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	m := n.nested[best]
	if cand := path.Join(m.dir, strings.TrimPrefix(strings.TrimPrefix(pkg, m.path), "/"), p); n.has(cand) {
		return cand
	}
	return ""
}

// findModules lists the Go modules in the directories below ws (not ws
// itself), at most maxModuleDepth levels down and maxModuleDirs
// directories, never entering hidden directories, vendor, node_modules,
// testdata or symbolic links.
func findModules(ws string) []nestedModule {
	var out []nestedModule
	type level struct {
		rel   string
		depth int
	}
	queue := []level{{".", 0}}
	for read := 0; len(queue) > 0 && read < maxModuleDirs; read++ {
		cur := queue[0]
		queue = queue[1:]
		entries, err := os.ReadDir(filepath.Join(ws, filepath.FromSlash(cur.rel)))
		if err != nil {
			continue
		}
		for _, e := range entries {
			name := e.Name()
			switch {
			case cur.rel != "." && name == "go.mod" && e.Type().IsRegular():
				if mod := goModule(filepath.Join(ws, filepath.FromSlash(cur.rel), name)); mod != "" {
					out = append(out, nestedModule{path: mod, dir: cur.rel})
				}
			case e.IsDir() && cur.depth < maxModuleDepth && !strings.HasPrefix(name, ".") &&
				name != "vendor" && name != "node_modules" && name != "testdata":
				queue = append(queue, level{path.Join(cur.rel, name), cur.depth + 1})
			}
		}
	}
	return out
}

// abs rewrites an absolute path inside the workspace or a runner checkout.
func (n *normalizer) abs(p string) string {
	if n.ws != "" {
		ws := filepath.ToSlash(n.ws) + "/"
		if rel, ok := strings.CutPrefix(p, ws); ok {
			return rel
		}
	}
	if rel, ok := runnerRel(p); ok {
		return rel
	}
	if n.ws == "" {
		return p
	}
	// The longest suffix (two components at least) that exists in the
	// workspace: the same repository checked out somewhere else.
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i := 1; i+2 <= len(parts); i++ {
		if cand := strings.Join(parts[i:], "/"); n.has(cand) {
			return cand
		}
	}
	return p
}

// runnerRel strips a GitHub runner's checkout prefix:
// .../work/REPO/REPO/rest, /__w/REPO/REPO/rest, D:/a/REPO/REPO/rest.
func runnerRel(p string) (string, bool) {
	for _, marker := range []string{"/work/", "/_work/", "/__w/", ":/a/"} {
		i := strings.Index(p, marker)
		if i < 0 {
			continue
		}
		rest := p[i+len(marker):]
		a, after, ok := strings.Cut(rest, "/")
		if !ok {
			continue
		}
		b, rel, ok := strings.Cut(after, "/")
		if ok && a == b && a != "" && rel != "" {
			return rel, true
		}
	}
	return "", false
}

// has reports whether rel exists in the workspace.
func (n *normalizer) has(rel string) bool {
	if n.ws == "" {
		return false
	}
	if v, ok := n.exists[rel]; ok {
		return v
	}
	_, err := os.Stat(filepath.Join(n.ws, filepath.FromSlash(rel)))
	n.exists[rel] = err == nil
	return err == nil
}
