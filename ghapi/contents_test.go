package ghapi

import (
	"errors"
	"net/http"
	"strings"
	"testing"
)

func TestFileAtRef(t *testing.T) {
	t.Parallel()
	const config = "labels:\n  push: mini-agent:push\n"
	tests := []struct {
		name     string
		status   int
		body     string
		want     string
		wantKind error // nil with wantErr: an unclassified error
		wantErr  bool
	}{
		{
			name: "found", status: 200,
			// "bGFiZWxzOgogIHB1c2g6IG1pbmktYWdlbnQ6cHVzaAo=" with GitHub's line breaks.
			body: `{"type":"file","encoding":"base64","size":32,"name":"mini-agent.yml","path":".github/mini-agent.yml",` +
				`"content":"bGFiZWxzOgogIHB1c2g6IG1p\nbmktYWdlbnQ6cHVzaAo=\n","sha":"3d21ec53a331a6f037a91c368710b99387d012c1"}`,
			want: config,
		},
		{name: "missing", status: 404, body: `{"message":"Not Found"}`, wantKind: ErrNotFound, wantErr: true},
		{name: "forbidden", status: 403, body: `{"message":"Resource not accessible by integration"}`, wantKind: ErrForbidden, wantErr: true},
		{name: "directory", status: 200, body: `[{"type":"file","name":"a","path":".github/mini-agent.yml/a"}]`, wantErr: true},
		{name: "too large", status: 200, body: `{"type":"file","encoding":"none","content":"","path":".github/mini-agent.yml"}`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := setup(t)
			f.handle("/repos/o/r/contents/.github/mini-agent.yml", func(w http.ResponseWriter, r *http.Request) {
				testMethod(t, r, "GET")
				testFormValues(t, r, map[string]string{"ref": "main"})
				writeJSON(w, tt.status, tt.body)
			})
			got, err := f.client.FileAtRef(t.Context(), "o", "r", ".github/mini-agent.yml", "main")
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if tt.wantErr {
				if got != nil {
					t.Errorf("content = %q with an error", got)
				}
				if tt.wantKind != nil && !errors.Is(err, tt.wantKind) {
					t.Errorf("err = %v, want %v", err, tt.wantKind)
				}
				if tt.wantKind == nil && errors.Is(err, ErrNotFound) {
					t.Errorf("err = %v must not look like not-found", err)
				}
				return
			}
			if string(got) != tt.want {
				t.Errorf("content = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDefaultBranch(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.handle("/repos/o/r", func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "GET")
		writeJSON(w, 200, `{"id":1,"full_name":"o/r","default_branch":"trunk"}`)
	})
	got, err := f.client.DefaultBranch(t.Context(), "o", "r")
	if err != nil || got != "trunk" {
		t.Fatalf("DefaultBranch = %q, %v; want trunk", got, err)
	}
}

func TestBranchHead(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.handle("/repos/o/r/git/ref/heads/feature/x", func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "GET")
		writeJSON(w, 200, `{"ref":"refs/heads/feature/x","object":{"type":"commit","sha":"aa218f56b14c9653891f9e74264a383fa43fefbd"}}`)
	})
	f.handle("/repos/o/r/git/ref/heads/gone", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 404, `{"message":"Not Found"}`)
	})
	got, err := f.client.BranchHead(t.Context(), "o", "r", "feature/x")
	if err != nil || got != "aa218f56b14c9653891f9e74264a383fa43fefbd" {
		t.Fatalf("BranchHead = %q, %v", got, err)
	}
	_, err = f.client.BranchHead(t.Context(), "o", "r", "gone")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "get branch gone") {
		t.Fatalf("err = %v, want not found naming the branch", err)
	}
}
