package flakyjob

import (
	"context"
	"encoding/base64"
	"os/exec"
	"strings"
	"testing"

	"github.com/org/mini-agent/ghapi"
)

// recordingGitHub keeps every text written through the five write calls.
type recordingGitHub struct {
	GitHub
	texts []string
}

func (g *recordingGitHub) CreateIssue(_ context.Context, _, _ string, n ghapi.NewIssue) (*ghapi.Issue, error) {
	g.texts = append(g.texts, n.Title, n.Body)
	return &ghapi.Issue{}, nil
}

func (g *recordingGitHub) CreateComment(_ context.Context, _, _ string, _ int, body string) (*ghapi.Comment, error) {
	g.texts = append(g.texts, body)
	return &ghapi.Comment{}, nil
}

func (g *recordingGitHub) UpdateComment(_ context.Context, _, _ string, _ int64, body string) (*ghapi.Comment, error) {
	g.texts = append(g.texts, body)
	return &ghapi.Comment{}, nil
}

func (g *recordingGitHub) CreatePR(_ context.Context, _, _ string, np ghapi.NewPR) (*ghapi.PR, error) {
	g.texts = append(g.texts, np.Title, np.Body)
	return &ghapi.PR{}, nil
}

func (g *recordingGitHub) UpdatePR(_ context.Context, _, _ string, _ int, u ghapi.PRUpdate) (*ghapi.PR, error) {
	g.texts = append(g.texts, *u.Title, *u.Body)
	return &ghapi.PR{}, nil
}

// What the flaky mode writes to GitHub never holds the environment's
// secrets or the checkout's persisted credential, whatever a test printed.
func TestFlakyModeRedactsWhatItPublishes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const persisted = "ghs_PersistedCheckoutToken0123456789ab"
	header := "AUTHORIZATION: basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+persisted))
	for _, args := range [][]string{{"init", "-q", dir}, {"-C", dir, "config", "http.https://github.com/.extraheader", header}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	const envSecret = "model-key-value-0123456789"
	job := Job{Workdir: dir, Env: []string{"OPENAI_API_KEY=" + envSecret, "HOME=/home/runner"}}
	rec := &recordingGitHub{}
	gh := redactingGitHub{GitHub: rec, rd: secrets(context.Background(), job)}
	leak := "the test printed " + persisted + " and " + envSecret + " and " + header
	ctx := context.Background()
	gh.CreateIssue(ctx, "o", "r", ghapi.NewIssue{Title: leak, Body: leak})
	gh.CreateComment(ctx, "o", "r", 1, leak)
	gh.UpdateComment(ctx, "o", "r", 1, leak)
	gh.CreatePR(ctx, "o", "r", ghapi.NewPR{Title: leak, Body: leak})
	title, body := leak, leak
	gh.UpdatePR(ctx, "o", "r", 1, ghapi.PRUpdate{Title: &title, Body: &body})
	if len(rec.texts) != 8 {
		t.Fatalf("%d texts recorded, want 8", len(rec.texts))
	}
	for _, s := range rec.texts {
		for _, secret := range []string{persisted, envSecret, header} {
			if strings.Contains(s, secret) {
				t.Fatalf("published %q", s)
			}
		}
		if !strings.Contains(s, "the test printed") {
			t.Fatalf("the text itself is gone: %q", s)
		}
	}
}
