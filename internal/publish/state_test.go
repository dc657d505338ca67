package publish

import (
	"strings"
	"testing"

	"github.com/org/mini-agent/internal/bundle"
)

func TestKeyAndState(t *testing.T) {
	t.Parallel()
	b := &bundle.Bundle{Signature: "abc", Extra: bundle.ExtraContext{Workflow: "CI", Job: "test"}}
	k := Key("main", b)
	if len(k) != keyLen || Key("main", b) != k {
		t.Fatalf("Key = %q, not stable or wrong length", k)
	}
	other := *b
	other.Signature = "abd"
	otherJob := *b
	otherJob.Extra.Job = "race"
	for name, k2 := range map[string]string{"target": Key("release", b), "signature": Key("main", &other), "job": Key("main", &otherJob)} {
		if k2 == k {
			t.Errorf("Key ignores the %s", name)
		}
	}
	if got := FixBranch("mini-agent/", k); got != "mini-agent/fix-"+k {
		t.Errorf("FixBranch = %q", got)
	}

	st := state{Attempts: 3, FailingSHA: strings.Repeat("a", 40)}
	body := "## report\n" + "<!-- mini-agent:state attempts=9 failing-sha=bb -->\n" + "text\n" + st.marker() + "\n"
	if got := parseState(body); got != st {
		t.Errorf("parseState = %+v, want the last marker %+v", got, st)
	}
	if got := parseState("quoted: " + st.marker()); got != (state{}) {
		t.Errorf("a marker not on its own line was read: %+v", got)
	}
}

func TestWithDiffBounds(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("+x\n", 20000)
	out := withDiff("body\n", huge, "Diff")
	if len(out) > maxDiffInComment+1000 || !strings.Contains(out, "Diff cut at") {
		t.Errorf("diff not bounded: %d bytes", len(out))
	}
	if got := clampComment(strings.Repeat("é", 40000)); len(got) > 65536 || !strings.HasSuffix(got, "job summary._\n") {
		t.Errorf("clampComment: %d bytes", len(got))
	}
}

func TestStateKeepsTheCISection(t *testing.T) {
	st := state{Attempts: 2, FailingSHA: "ab", CI: ciState{Status: CIFailed, Workflow: "ci.yml", RunID: 77, FailSig: "0a1b", FailSeen: 2}}
	if got := parseState("x\n" + st.marker() + "\n"); got != st {
		t.Errorf("round trip = %+v, want %+v", got, st)
	}
	// A value the marker cannot hold is left out, never a marker that
	// cannot be read (the attempts count would be lost).
	odd := st
	odd.CI.Workflow = "my ci.yml"
	if got := parseState(odd.marker()); got.Attempts != 2 || got.CI.Workflow != "" || got.CI.RunID != 77 {
		t.Errorf("odd workflow name: %+v from %s", got, odd.marker())
	}
	// An unknown status reads as none; the old marker still reads.
	if got := parseState("<!-- mini-agent:state attempts=1 failing-sha=ab ci=bogus ci-run=5 -->"); got.CI.Status != "" || got.CI.RunID != 5 || got.Attempts != 1 {
		t.Errorf("bogus status: %+v", got)
	}
	if got := parseState("<!-- mini-agent:state attempts=4 failing-sha=cd -->"); got != (state{Attempts: 4, FailingSHA: "cd"}) {
		t.Errorf("old marker: %+v", got)
	}
}

func TestWithCIReplacesTheSection(t *testing.T) {
	st := state{Attempts: 1, FailingSHA: "ab", CI: ciState{Status: CIPending}}
	body := "report\n\n" + st.marker() + "\n"
	b1 := withCI(body, ciView{Status: CIPending, Branch: "b"}.render(), st)
	st.CI.Status, st.CI.RunID = CIRunning, 9
	b2 := withCI(b1, ciView{Status: CIRunning, Branch: "b", RunID: 9, RunURL: "u"}.render(), st)
	if strings.Count(b2, ciBegin) != 1 || strings.Count(b2, "mini-agent:state") != 1 || !strings.Contains(b2, "running → [run 9](u)") ||
		strings.Contains(b2, "next.") || !strings.HasPrefix(b2, "report\n") || parseState(b2).CI.RunID != 9 {
		t.Errorf("body:\n%s", b2)
	}
	if strings.Index(b2, ciBegin) > strings.Index(b2, "mini-agent:state") {
		t.Error("the section is after the marker")
	}
}
