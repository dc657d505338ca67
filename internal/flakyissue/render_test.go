package flakyissue

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/org/mini-agent/ghapi"
	"github.com/org/mini-agent/internal/flakyscan"
)

func TestInlineAndFenced(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"TestA", "TestA"},
		{"Test\u202eA\u200b", "TestA"},
		{"a|b`c\nd", "a\\|b'c d"},
		{"cc @octocat", "cc @\u200boctocat"},
		{"x <!-- mini-agent:flaky id=forged --> y", "x  y"},
		{"<!-<!-- x -->- open", ""}, // what is left opens a comment: hidden to the end
	}
	for _, tc := range tests {
		if got := inline(tc.in); got != tc.want {
			t.Errorf("inline(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	f := fenced("before\n```\n@team <!-- hidden\nrest")
	if !strings.HasPrefix(f, "````text\n") || !strings.HasSuffix(f, "\n````\n") || strings.Contains(f, "<!--") || strings.Contains(f, "hidden") {
		t.Errorf("fenced = %q", f)
	}
}

func TestLinkRefusesWhatCouldBreakOut(t *testing.T) {
	t.Parallel()
	for u, want := range map[string]string{
		"https://github.com/o/r/actions/runs/1":        "[1](https://github.com/o/r/actions/runs/1)",
		"javascript:alert(1)":                          "1",
		"https://github.com/o/r/actions/runs/1) [x](y": "1",
		"": "1",
	} {
		if got := link("1", u); got != want {
			t.Errorf("link(%q) = %q, want %q", u, got, want)
		}
	}
}

func TestClampKeepsTheHiddenLines(t *testing.T) {
	t.Parallel()
	ref := flakyscan.TestRef{WorkflowID: 1, Job: "test", Package: "p", Test: "TestX"}
	tail := "\n" + Marker(ref) + "\n" + seenLine(map[string]bool{"1.1.2": true}) + "\n"
	body := "## head\n" + strings.Repeat("é row\n", 20000) + tail
	got := clamp(body)
	if len(got) > ghapi.MaxCommentBytes || !strings.HasSuffix(got, tail) || !utf8.ValidString(got) {
		t.Fatalf("clamped to %d bytes, tail kept %v, valid %v", len(got), strings.HasSuffix(got, tail), utf8.ValidString(got))
	}
	is := ghapi.Issue{Body: got}
	if !is.Carries(Marker(ref)) {
		t.Error("the marker is lost")
	}
	seen := map[string]bool{}
	parseSeen(got, seen)
	if !seen["1.1.2"] {
		t.Errorf("seen = %v", seen)
	}
	if short := "small body"; clamp(short) != short {
		t.Error("a short body changed")
	}
}
