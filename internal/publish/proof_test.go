package publish_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/org/mini-agent/internal/bundle"
	"github.com/org/mini-agent/internal/publish"
	"github.com/org/mini-agent/internal/route"
)

// A bundle whose files do not make the tree its validation recorded (an
// edited bundle, or a validation of another tree) is refused when GitHub
// builds the tree: no commit, no branch, no PR.
func TestPublishRefusesATreeOtherThanTheValidatedOne(t *testing.T) {
	t.Parallel()
	for name, edit := range map[string]func(b *bundle.Bundle){
		"file edited after validation": func(b *bundle.Bundle) {
			for i := range b.Files {
				if b.Files[i].Path == "parser.go" {
					b.Files[i].Content = append(b.Files[i].Content, []byte("// more\n")...)
				}
			}
		},
		"another tree recorded": func(b *bundle.Bundle) {
			b.TreeSHA = strings.Repeat("1", 40)
			b.Proof.Tree = b.TreeSHA
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			b := makeBundle(t, f.head, theFix)
			edit(b)
			res, err := publish.Publish(t.Context(), f.gh, publish.Request{Bundle: b, Job: f.job(route.WritePropose), Config: cfg(t, "")})
			if !errors.Is(err, publish.ErrRefused) || res == nil || res.Status != publish.StatusFailed || res.Action != publish.ActionRefused {
				t.Fatalf("Publish = %+v, %v; want refused", res, err)
			}
			if !strings.Contains(err.Error(), "validated") && !strings.Contains(err.Error(), "does not match the diff") {
				t.Errorf("the refusal does not say why: %v", err)
			}
			if got := f.s.Branches(repo); len(got) != 2 { // main and feature/parser
				t.Errorf("branches %v: something was committed", got)
			}
			if f.count("POST", "/repos/"+repo+"/git/commits") != 0 || f.count("POST", "/repos/"+repo+"/pulls") != 0 {
				t.Errorf("a commit or a PR was created: %v", f.s.Requests())
			}
		})
	}
}

// A fixed bundle without a proof on a clean checkout (an older binary's,
// or one edited to say fixed) is refused before anything is written.
func TestPublishRefusesAFixWithoutProof(t *testing.T) {
	t.Parallel()
	for name, edit := range map[string]func(b *bundle.Bundle){
		"no proof":        func(b *bundle.Bundle) { b.Proof = nil },
		"proof not held":  func(b *bundle.Bundle) { b.Proof.Holds = false },
		"no tree":         func(b *bundle.Bundle) { b.TreeSHA = "" },
		"tree differs":    func(b *bundle.Bundle) { b.TreeSHA = strings.Repeat("2", 40) },
		"fixed, no proof": func(b *bundle.Bundle) { b.Baseline, b.Proof, b.TreeSHA = nil, nil, "" },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			b := makeBundle(t, f.head, theFix)
			edit(b)
			before := f.writes()
			_, err := publish.Publish(t.Context(), f.gh, publish.Request{Bundle: b, Job: f.job(route.WritePropose), Config: cfg(t, "")})
			if !errors.Is(err, publish.ErrRefused) {
				t.Fatalf("err = %v, want refused", err)
			}
			if f.writes() != before {
				t.Fatalf("%d writes", f.writes()-before)
			}
		})
	}
}

// A failure that did not reproduce: the PR thread gets the report (which
// tests, passed N of N runs, this machine); no branch, no PR, whatever the
// on-failure policy says.
func TestNotReproducedIsACommentNeverABranch(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	b := makeBundle(t, f.head, edit{})
	b.Status = bundle.StatusNotReproduced
	b.Proof, b.TreeSHA, b.Validation = nil, "", nil
	b.Baseline.Verdict = bundle.VerdictNotReproduced
	b.Baseline.Targets = []bundle.TestRecord{{ID: "hello.TestParseEmpty", Runs: 3}}
	b.Baseline.Environment = []string{"os/arch: linux/amd64", "go: go version go1.26.8 linux/amd64"}
	c := cfg(t, "on-failure: draft\n")
	res, err := publish.Publish(t.Context(), f.gh, publish.Request{Bundle: b, Job: f.job(route.WritePropose), Config: c})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != publish.StatusNotReproduced || res.Action != publish.ActionNotReproduced || res.PRNumber != 7 {
		t.Fatalf("result %+v", res)
	}
	if got := f.s.Branches(repo); len(got) != 2 {
		t.Fatalf("branches %v", got)
	}
	cs := f.s.Comments(repo, 7)
	if len(cs) != 1 {
		t.Fatalf("%d comments", len(cs))
	}
	contains(t, "comment", cs[0].Body, "not reproduced", "hello.TestParseEmpty passed 3 of 3 runs", "**not-reproduced**", "go1.26.8")
}
