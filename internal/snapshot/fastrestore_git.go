package snapshot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// The fast restore's two git processes: neither reads the shadow index.

// catBlobs reads the recorded blobs of recs with one `git cat-file
// --batch` on the shadow repository (its objects and the borrowed ones).
func (s *Snapshot) catBlobs(ctx context.Context, recs []rawRecord) (map[string][]byte, error) {
	out := map[string][]byte{}
	if len(recs) == 0 {
		return out, nil
	}
	var in strings.Builder
	for _, r := range recs {
		in.WriteString(r.oldBlob + "\n")
	}
	raw, err := gitexecRun(ctx, s, strings.NewReader(in.String()), "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
	for range recs {
		// "<oid> blob <size>\n<bytes>\n", or "<oid> missing\n".
		head, rest, ok := bytes.Cut(raw, []byte("\n"))
		f := strings.Fields(string(head))
		if !ok || len(f) != 3 || f[1] != "blob" {
			return nil, fmt.Errorf("snapshot: unexpected cat-file output %q", head)
		}
		n, err := strconv.Atoi(f[2])
		if err != nil || n < 0 || n+1 > len(rest) || rest[n] != '\n' {
			return nil, fmt.Errorf("snapshot: truncated cat-file output for %s", f[0])
		}
		out[f[0]] = rest[:n:n]
		raw = rest[n+1:]
	}
	for _, r := range recs {
		if _, ok := out[r.oldBlob]; !ok {
			return nil, fmt.Errorf("snapshot: cat-file did not give %s", r.oldBlob)
		}
	}
	return out, nil
}

// checkIgnoredNoIndex returns which of the new paths git's ignore rules
// exclude, as `git add -A` would decide: `check-ignore --no-index` runs
// the same rules (every .gitignore up the path, negations, the shadow's
// info/exclude) without reading the index, and lstat()s each path to know
// a directory. It names a path only when a rule ignores it (a negated
// match is not named).
func (s *Snapshot) checkIgnoredNoIndex(ctx context.Context, fresh []newPath) (map[string]bool, error) {
	var in strings.Builder
	for _, n := range fresh {
		in.WriteString(n.path + "\x00")
	}
	out, err := gitexecRun(ctx, s, strings.NewReader(in.String()), "check-ignore", "--no-index", "-z", "--stdin")
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 {
		return map[string]bool{}, nil // none is ignored
	}
	if err != nil {
		return nil, err
	}
	ignored := map[string]bool{}
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			ignored[p] = true
		}
	}
	return ignored, nil
}
