package ghtest

import (
	"encoding/base64"
	"maps"
	"net/http"
	"strings"
	"time"
)

func (s *Server) routeGit(mux *http.ServeMux) {
	s.handle(mux, "POST /repos/{owner}/{repo}/git/blobs", func(w http.ResponseWriter, r *http.Request, rp *repo) {
		var in struct{ Content, Encoding string }
		if !decode(w, r, &in) {
			return
		}
		b := []byte(in.Content)
		switch in.Encoding {
		case "base64":
			var err error
			if b, err = base64.StdEncoding.DecodeString(in.Content); err != nil {
				writeErr(w, 422, "content is not valid Base64")
				return
			}
		case "", "utf-8":
		default:
			writeErr(w, 422, "encoding must be utf-8 or base64")
			return
		}
		writeJSON(w, 201, map[string]any{"sha": rp.putBlob(b)})
	})

	s.handle(mux, "POST /repos/{owner}/{repo}/git/trees", func(w http.ResponseWriter, r *http.Request, rp *repo) {
		var in struct {
			BaseTree string `json:"base_tree"`
			Tree     []struct {
				Path, Mode, Type string
				SHA              *string
				Content          *string
			}
		}
		if !decode(w, r, &in) {
			return
		}
		tree := map[string]entry{}
		if in.BaseTree != "" {
			base, ok := rp.trees[in.BaseTree]
			if !ok {
				writeErr(w, 422, "base_tree is not a valid tree")
				return
			}
			maps.Copy(tree, base)
		}
		for _, e := range in.Tree {
			switch {
			case e.Path == "" || strings.HasPrefix(e.Path, "/") || e.Type != "blob":
				writeErr(w, 422, "tree.path and tree.type=blob are required")
				return
			case e.Mode != "100644" && e.Mode != "100755" && e.Mode != "120000":
				writeErr(w, 422, "tree.mode is invalid")
				return
			case e.Content != nil:
				tree[e.Path] = entry{mode: e.Mode, sha: rp.putBlob([]byte(*e.Content))}
			case e.SHA == nil:
				delete(tree, e.Path)
			default:
				if _, ok := rp.blobs[*e.SHA]; !ok {
					writeErr(w, 422, "tree.sha "+*e.SHA+" is not a valid blob")
					return
				}
				tree[e.Path] = entry{mode: e.Mode, sha: *e.SHA}
			}
		}
		sha, err := rp.putTree(tree)
		if err != nil {
			writeErr(w, 422, "tree is invalid: "+err.Error())
			return
		}
		writeJSON(w, 201, map[string]any{"sha": sha, "truncated": false})
	})

	s.handle(mux, "GET /repos/{owner}/{repo}/git/blobs/{sha}", func(w http.ResponseWriter, r *http.Request, rp *repo) {
		sha := r.PathValue("sha")
		b, ok := rp.blobs[sha]
		if !ok {
			writeErr(w, 404, "Not Found")
			return
		}
		writeJSON(w, 200, map[string]any{"sha": sha, "size": len(b), "encoding": "base64", "content": wrapLines(base64.StdEncoding.EncodeToString(b))})
	})

	s.handle(mux, "GET /repos/{owner}/{repo}/git/commits/{sha}", func(w http.ResponseWriter, r *http.Request, rp *repo) {
		sha := r.PathValue("sha")
		c, ok := rp.commits[sha]
		if !ok {
			writeErr(w, 404, "Not Found")
			return
		}
		writeJSON(w, 200, commitJSON(sha, c))
	})

	s.handle(mux, "POST /repos/{owner}/{repo}/git/commits", func(w http.ResponseWriter, r *http.Request, rp *repo) {
		var in struct {
			Message, Tree string
			Parents       []string
		}
		if !decode(w, r, &in) {
			return
		}
		if _, ok := rp.trees[in.Tree]; !ok || in.Message == "" {
			writeErr(w, 422, "tree and message are required")
			return
		}
		for _, p := range in.Parents {
			if _, ok := rp.commits[p]; !ok {
				writeErr(w, 422, "parent "+p+" is not a commit")
				return
			}
		}
		c := commit{tree: in.Tree, parents: in.Parents, message: in.Message, verified: true}
		writeJSON(w, 201, commitJSON(rp.putCommit(c), c))
	})

	s.handle(mux, "GET /repos/{owner}/{repo}/git/ref/{ref...}", func(w http.ResponseWriter, r *http.Request, rp *repo) {
		ref := r.PathValue("ref")
		sha, ok := rp.refs[ref]
		if !ok {
			writeErr(w, 404, "Not Found")
			return
		}
		writeJSON(w, 200, refJSON(ref, sha))
	})

	s.handle(mux, "POST /repos/{owner}/{repo}/git/refs", func(w http.ResponseWriter, r *http.Request, rp *repo) {
		var in struct{ Ref, SHA string }
		if !decode(w, r, &in) {
			return
		}
		ref, ok := strings.CutPrefix(in.Ref, "refs/")
		switch {
		case !ok || !strings.HasPrefix(ref, "heads/"):
			writeErr(w, 422, "Reference name must start with refs/heads/")
		case rp.refs[ref] != "":
			writeErr(w, 422, "Reference already exists")
		case rp.commits[in.SHA].tree == "":
			writeErr(w, 422, "Object does not exist")
		default:
			rp.refs[ref] = in.SHA
			writeJSON(w, 201, refJSON(ref, in.SHA))
		}
	})

	s.handle(mux, "PATCH /repos/{owner}/{repo}/git/refs/{ref...}", func(w http.ResponseWriter, r *http.Request, rp *repo) {
		var in struct {
			SHA   string
			Force bool
		}
		if !decode(w, r, &in) {
			return
		}
		ref := r.PathValue("ref")
		cur, ok := rp.refs[ref]
		switch {
		case !ok:
			writeErr(w, 422, "Reference does not exist")
		case rp.commits[in.SHA].tree == "":
			writeErr(w, 422, "Object does not exist")
		case !in.Force && !rp.isAncestor(cur, in.SHA):
			writeErr(w, 422, "Update is not a fast forward")
		default:
			rp.refs[ref] = in.SHA
			writeJSON(w, 200, refJSON(ref, in.SHA))
		}
	})
}

func commitJSON(sha string, c commit) map[string]any {
	parents := []map[string]any{}
	for _, p := range c.parents {
		parents = append(parents, map[string]any{"sha": p})
	}
	ident := map[string]any{"name": BotLogin, "email": botEmail,
		"date": time.Unix(commitTime, 0).UTC().Format(time.RFC3339)}
	return map[string]any{
		"sha": sha, "message": c.message, "tree": map[string]any{"sha": c.tree}, "parents": parents,
		"author":       ident,
		"committer":    ident,
		"verification": verification(c.verified),
	}
}

func verification(ok bool) map[string]any {
	if ok {
		return map[string]any{"verified": true, "reason": "valid"}
	}
	return map[string]any{"verified": false, "reason": "unsigned"}
}

func refJSON(ref, sha string) map[string]any {
	return map[string]any{"ref": "refs/" + ref, "object": map[string]any{"type": "commit", "sha": sha}}
}
