package ghtest

import (
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
)

// entry is a file in a tree. The fake keeps a tree flat, path -> entry; its
// id is the one git gives the nested trees it stands for (treeID).
type entry struct{ mode, sha string }

type commit struct {
	tree    string
	parents []string
	message string
	// verified: made through the API (GitHub signs those); seeded pushes
	// are not.
	verified bool
}

type repo struct {
	id            int64
	fullName      string
	defaultBranch string
	blobs         map[string][]byte
	trees         map[string]map[string]entry // sha -> path -> entry
	commits       map[string]commit
	refs          map[string]string // "heads/x" -> commit sha
	pulls         []*pull
	issues        map[int]*issue // PRs and plain issues share numbers
	runs          map[int64]*run
	jobs          map[int64]*job
	annotations   map[int64][]Annotation // by check-run ID
	noActionsPRs  bool                   // refusals.go: the Actions PR setting is off
	rulesets      []Ruleset              // refusals.go
}

// Every commit the fake writes has this author and committer, at this time.
const (
	botEmail   = "41898282+github-actions[bot]@users.noreply.github.com"
	commitTime = 1700000000 // 2023-11-14T22:13:20Z
)

// gitID is the id git gives an object of kind ("blob", "tree", "commit")
// with body, in the SHA-1 object format.
func gitID(kind string, body []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "%s %d\x00", kind, len(body))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

func (rp *repo) putBlob(b []byte) string {
	sha := gitID("blob", b)
	rp.blobs[sha] = b
	return sha
}

// putTree stores the flat tree t under the id git gives the nested trees it
// stands for. It fails when t is no tree git could write: an empty, "." or
// ".." path segment, or one path both a file and a directory.
func (rp *repo) putTree(t map[string]entry) (string, error) {
	sha, err := treeID("", t)
	if err != nil {
		return "", err
	}
	rp.trees[sha] = t
	return sha, nil
}

// treeID is the git id of directory dir ("" for the root, else ending in
// "/") whose files are t, by path relative to dir: entries
// "<mode> <name>\x00<20-byte id>", a subdirectory as mode 40000 with the id
// of its own tree, sorted as git sorts them (bytewise, a subdirectory's name
// with a trailing "/"). Git has no empty directories: a directory exists
// through its files only.
func treeID(dir string, t map[string]entry) (string, error) {
	type item struct{ key, mode, name, sha string }
	var items []item
	subdirs := map[string]map[string]entry{}
	for p, e := range t {
		name, rest, isDir := strings.Cut(p, "/")
		if name == "" || name == "." || name == ".." {
			return "", fmt.Errorf("path %q has an empty, . or .. segment", dir+p)
		}
		if !isDir {
			items = append(items, item{key: name, mode: e.mode, name: name, sha: e.sha})
			continue
		}
		if subdirs[name] == nil {
			subdirs[name] = map[string]entry{}
		}
		subdirs[name][rest] = e
	}
	for name, sub := range subdirs {
		if _, ok := t[name]; ok {
			return "", fmt.Errorf("%q is both a file and a directory", dir+name)
		}
		sha, err := treeID(dir+name+"/", sub)
		if err != nil {
			return "", err
		}
		items = append(items, item{key: name + "/", mode: "40000", name: name, sha: sha})
	}
	slices.SortFunc(items, func(a, b item) int { return strings.Compare(a.key, b.key) })
	var body []byte
	for _, it := range items {
		raw, err := hex.DecodeString(it.sha)
		if err != nil || len(raw) != sha1.Size {
			return "", fmt.Errorf("%q: object id %q is not a SHA-1", dir+it.name, it.sha)
		}
		body = fmt.Appendf(body, "%s %s\x00", it.mode, it.name)
		body = append(body, raw...)
	}
	return gitID("tree", body), nil
}

// commitText is the git object a commit is stored as.
func commitText(c commit) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "tree %s\n", c.tree)
	for _, p := range c.parents {
		fmt.Fprintf(&b, "parent %s\n", p)
	}
	ident := fmt.Sprintf("%s <%s> %d +0000", BotLogin, botEmail, commitTime)
	fmt.Fprintf(&b, "author %s\ncommitter %s\n\n%s", ident, ident, c.message)
	return []byte(b.String())
}

func (rp *repo) putCommit(c commit) string {
	sha := gitID("commit", commitText(c))
	rp.commits[sha] = c
	return sha
}

// resolve turns a branch name or commit SHA into a commit SHA.
func (rp *repo) resolve(ref string) (string, bool) {
	if ref == "" {
		ref = rp.defaultBranch
	}
	if sha, ok := rp.refs["heads/"+strings.TrimPrefix(ref, "refs/heads/")]; ok {
		return sha, true
	}
	_, ok := rp.commits[ref]
	return ref, ok
}

// isAncestor reports whether a is b or one of its ancestors.
func (rp *repo) isAncestor(a, b string) bool {
	seen := map[string]bool{}
	for todo := []string{b}; len(todo) > 0; {
		c := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if c == a {
			return true
		}
		if !seen[c] {
			seen[c] = true
			todo = append(todo, rp.commits[c].parents...)
		}
	}
	return false
}

// AddRepo creates owner/name with one commit holding files on defaultBranch
// and returns that commit's SHA.
func (s *Server) AddRepo(fullName, defaultBranch string, files map[string]string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := &repo{
		id: s.id(), fullName: fullName, defaultBranch: defaultBranch,
		blobs: map[string][]byte{}, trees: map[string]map[string]entry{}, commits: map[string]commit{},
		refs: map[string]string{}, issues: map[int]*issue{}, runs: map[int64]*run{}, jobs: map[int64]*job{},
		annotations: map[int64][]Annotation{},
	}
	s.repos[strings.ToLower(fullName)] = rp
	return rp.commitFiles(defaultBranch, "initial commit", files)
}

// Push commits files (content "" deletes) on branch, creating it from the
// default branch if needed, as a push by someone else would. It returns the
// new head.
func (s *Server) Push(fullName, branch string, files map[string]string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.repos[strings.ToLower(fullName)].commitFiles(branch, "push", files)
}

// Commit is Push with a commit message of the caller's.
func (s *Server) Commit(fullName, branch, message string, files map[string]string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.repos[strings.ToLower(fullName)].commitFiles(branch, message, files)
}

func (rp *repo) commitFiles(branch, msg string, files map[string]string) string {
	tree := map[string]entry{}
	var parents []string
	if head, ok := rp.resolve(branch); ok {
		parents = []string{head}
		maps.Copy(tree, rp.trees[rp.commits[head].tree])
	} else if head, ok := rp.resolve(rp.defaultBranch); ok {
		parents = []string{head}
		maps.Copy(tree, rp.trees[rp.commits[head].tree])
	}
	for p, content := range files {
		if content == "" {
			delete(tree, p)
			continue
		}
		tree[p] = entry{mode: "100644", sha: rp.putBlob([]byte(content))}
	}
	treeSHA, err := rp.putTree(tree)
	if err != nil {
		panic("ghtest: seeding " + rp.fullName + " " + branch + ": " + err.Error())
	}
	sha := rp.putCommit(commit{tree: treeSHA, parents: parents, message: msg})
	rp.refs["heads/"+branch] = sha
	return sha
}

// File is a file as stored at some commit.
type File struct {
	Content string
	Mode    string
}

// Files returns the files of repo at ref (branch or commit SHA), nil if the
// ref is unknown.
func (s *Server) Files(fullName, ref string) map[string]File {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.repos[strings.ToLower(fullName)]
	sha, ok := rp.resolve(ref)
	if !ok {
		return nil
	}
	out := map[string]File{}
	for p, e := range rp.trees[rp.commits[sha].tree] {
		out[p] = File{Content: string(rp.blobs[e.sha]), Mode: e.mode}
	}
	return out
}

// Head returns the commit SHA of branch, "" if it does not exist.
func (s *Server) Head(fullName, branch string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.repos[strings.ToLower(fullName)].refs["heads/"+branch]
}

// Branches returns the repository's branch names, sorted.
func (s *Server) Branches(fullName string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for ref := range s.repos[strings.ToLower(fullName)].refs {
		if name, ok := strings.CutPrefix(ref, "heads/"); ok {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Parents returns the parent SHAs of commit sha.
func (s *Server) Parents(fullName, sha string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.repos[strings.ToLower(fullName)].commits[sha].parents
}

func (s *Server) routeRepos(mux *http.ServeMux) {
	s.handle(mux, "GET /repos/{owner}/{repo}", func(w http.ResponseWriter, r *http.Request, rp *repo) {
		owner, name, _ := strings.Cut(rp.fullName, "/")
		writeJSON(w, 200, map[string]any{"id": rp.id, "name": name, "full_name": rp.fullName,
			"owner": map[string]any{"login": owner}, "default_branch": rp.defaultBranch, "private": false})
	})
	s.handle(mux, "GET /repos/{owner}/{repo}/contents/{path...}", func(w http.ResponseWriter, r *http.Request, rp *repo) {
		sha, ok := rp.resolve(r.URL.Query().Get("ref"))
		if !ok {
			writeErr(w, 404, "No commit found for the ref "+r.URL.Query().Get("ref"))
			return
		}
		p := r.PathValue("path")
		tree := rp.trees[rp.commits[sha].tree]
		if e, ok := tree[p]; ok {
			writeJSON(w, 200, map[string]any{"type": "file", "encoding": "base64", "path": p,
				"name": p[strings.LastIndex(p, "/")+1:], "sha": e.sha, "size": len(rp.blobs[e.sha]),
				"content": wrapLines(base64.StdEncoding.EncodeToString(rp.blobs[e.sha]))})
			return
		}
		var dir []map[string]any
		for _, fp := range slices.Sorted(maps.Keys(tree)) {
			if strings.HasPrefix(fp, p+"/") {
				dir = append(dir, map[string]any{"type": "file", "path": fp, "sha": tree[fp].sha})
			}
		}
		if dir == nil {
			writeErr(w, 404, "Not Found")
			return
		}
		writeJSON(w, 200, dir)
	})
}

// wrapLines breaks base64 into 60-character lines as the contents API does.
func wrapLines(s string) string {
	var b strings.Builder
	for len(s) > 60 {
		b.WriteString(s[:60] + "\n")
		s = s[60:]
	}
	b.WriteString(s + "\n")
	return b.String()
}

// TreeChange is one path of TreeAfter's change: Delete removes it, else it
// gets Content with Mode ("" means 100644).
type TreeChange struct {
	Path, Content, Mode string
	Delete              bool
}

// TreeAfter is the git tree id the repository's tree at ref (branch or
// commit SHA) has with the changes applied: what a create-tree over that
// base tree with the same entries answers, and what a local `git
// write-tree` of the same files gives; false for an unknown repository or
// ref.
func (s *Server) TreeAfter(fullName, ref string, changes []TreeChange) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.repos[strings.ToLower(fullName)]
	if rp == nil {
		return "", false
	}
	sha, ok := rp.resolve(ref)
	if !ok {
		return "", false
	}
	tree := maps.Clone(rp.trees[rp.commits[sha].tree])
	for _, c := range changes {
		if c.Delete {
			delete(tree, c.Path)
			continue
		}
		mode := c.Mode
		if mode == "" {
			mode = "100644"
		}
		tree[c.Path] = entry{mode: mode, sha: gitID("blob", []byte(c.Content))}
	}
	id, err := treeID("", tree)
	if err != nil {
		return "", false
	}
	return id, true
}
