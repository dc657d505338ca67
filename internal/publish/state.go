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
}

var stateRE = regexp.MustCompile(`(?m)^<!-- mini-agent:state attempts=(\d+) failing-sha=([0-9a-f]*) -->$`)

func (s state) marker() string {
	return fmt.Sprintf("<!-- mini-agent:state attempts=%d failing-sha=%s -->", s.Attempts, s.FailingSHA)
}

// parseState reads the last state marker of a PR body; zero when absent.
func parseState(body string) state {
	all := stateRE.FindAllStringSubmatch(body, -1)
	if len(all) == 0 {
		return state{}
	}
	m := all[len(all)-1]
	n, _ := strconv.Atoi(m[1])
	return state{Attempts: n, FailingSHA: m[2]}
}
