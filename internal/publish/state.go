package publish

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/org/mini-agent/internal/bundle"
)

// TrackingMarker identifies mini-agent's one tracking comment on a PR.
const TrackingMarker = "<!-- mini-agent:tracking -->"

// keyLen is how many hex digits of the failure key name a branch.
const keyLen = 10

// Key identifies one failure for one target branch: the target, the
// workflow and job names, and the failing tests' signature. It names the fix
// branch, so one failure has one branch and one PR.
func Key(target string, b *bundle.Bundle) string {
	sig := b.Signature
	if sig == "" {
		// No extracted failure: the commit and command stand in for it.
		sig = "base\x00" + b.BaseSHA + "\x00" + b.Command
	}
	h := sha256.Sum256([]byte(strings.Join([]string{target, b.Extra.Workflow, b.Extra.Job, sig}, "\x00")))
	return hex.EncodeToString(h[:])[:keyLen]
}

// FixBranch is the branch mini-agent proposes a fix on.
func FixBranch(prefix, key string) string { return prefix + "fix-" + key }

// state is what mini-agent remembers in the PR body between runs.
type state struct {
	Attempts   int
	FailingSHA string
	// CI is the "CI on this branch" section's state (ci.go).
	CI ciState
}

var (
	stateRE = regexp.MustCompile(`(?m)^<!-- mini-agent:state attempts=(\d+) failing-sha=([0-9a-f]*)((?: [a-z-]+=[A-Za-z0-9._-]*)*) -->$`)
	fieldRE = regexp.MustCompile(` ([a-z-]+)=([A-Za-z0-9._-]*)`)
	// fieldValueRE is what a field's value may hold: anything else would
	// make the whole marker unreadable, so it is left out.
	fieldValueRE = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
)

func (s state) marker() string {
	var ci strings.Builder
	if s.CI.Status != "" {
		fmt.Fprintf(&ci, " ci=%s", s.CI.Status)
		if fieldValueRE.MatchString(s.CI.Workflow) {
			fmt.Fprintf(&ci, " ci-workflow=%s", s.CI.Workflow)
		}
		if s.CI.RunID != 0 {
			fmt.Fprintf(&ci, " ci-run=%d", s.CI.RunID)
		}
		if fieldValueRE.MatchString(s.CI.FailSig) {
			fmt.Fprintf(&ci, " ci-fail-sig=%s ci-fail-seen=%d", s.CI.FailSig, s.CI.FailSeen)
		}
	}
	return fmt.Sprintf("<!-- mini-agent:state attempts=%d failing-sha=%s%s -->", s.Attempts, s.FailingSHA, ci.String())
}

// parseState reads the last state marker of a PR body; zero when absent.
// Unknown fields are ignored; a malformed known field leaves it zero.
func parseState(body string) state {
	all := stateRE.FindAllStringSubmatch(body, -1)
	if len(all) == 0 {
		return state{}
	}
	m := all[len(all)-1]
	n, _ := strconv.Atoi(m[1])
	st := state{Attempts: n, FailingSHA: m[2]}
	for _, f := range fieldRE.FindAllStringSubmatch(m[3], -1) {
		switch k, v := f[1], f[2]; k {
		case "ci":
			if validCIStatus(CIStatus(v)) {
				st.CI.Status = CIStatus(v)
			}
		case "ci-workflow":
			st.CI.Workflow = v
		case "ci-run":
			st.CI.RunID, _ = strconv.ParseInt(v, 10, 64)
		case "ci-fail-sig":
			st.CI.FailSig = v
		case "ci-fail-seen":
			st.CI.FailSeen, _ = strconv.Atoi(v)
		}
	}
	return st
}
