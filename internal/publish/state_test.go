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
	if got := fenceFor("a ``` b ````` c"); got != "``````" {
		t.Errorf("fenceFor = %q", got)
	}
	huge := strings.Repeat("+x\n", 20000)
	out := withDiff("body\n", huge, "Diff")
	if len(out) > maxDiffInComment+1000 || !strings.Contains(out, "Diff cut at") {
		t.Errorf("diff not bounded: %d bytes", len(out))
	}
	if got := clampComment(strings.Repeat("é", 40000)); len(got) > 65536 || !strings.HasSuffix(got, "job summary._\n") {
		t.Errorf("clampComment: %d bytes", len(got))
	}
}
