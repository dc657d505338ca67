package failure

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// maxLaterSteps bounds the steps a deferred generic excerpt remembers, of
// each kind (failed, and the last ones that did not fail).
const maxLaterSteps = 64

// errRescan says that the input must be read again whole to build the
// result (more steps than were remembered).
var errRescan = errors.New("failure: generic excerpt needs a full rescan")

// stepSpan is where a step's lines are in the input: [start, end).
type stepSpan struct{ start, end int64 }

// deferred is the generic excerpt of a seekable input, built only when
// the result needs it. The excerpt is a fallback for when nothing was
// recognized, and it comes from one step: the first failed step with an
// excerpt, or when no step failed, the last step with one. Most logs that
// matter have a recognized failure, so the first reading keeps no excerpt
// (no error-word scan, no copy of each line) and notes where the steps
// are; when the excerpt is needed, those steps are read again, each on
// its own, which gives the excerpt the one reading would have given: a
// step's lines, recognizers and excerpt do not depend on other steps, and
// the excerpt is needed only when its step recognized nothing.
type deferred struct {
	rs     io.ReadSeeker
	origin int64 // where the input starts in rs
	opt    Options

	failed     []stepSpan // the first failed steps
	failedMore bool       // more failed steps than kept
	last       [maxLaterSteps]stepSpan
	nLast      int // steps that did not fail, seen so far (the last ones are in last)
}

func newDeferred(rs io.ReadSeeker, origin int64, opt Options) *deferred {
	return &deferred{rs: rs, origin: origin, opt: opt}
}

// step notes a finished step.
func (d *deferred) step(sp stepSpan, failed bool) {
	if failed {
		if len(d.failed) < maxLaterSteps {
			d.failed = append(d.failed, sp)
		} else {
			d.failedMore = true
		}
		return
	}
	d.last[d.nLast%maxLaterSteps] = sp
	d.nLast++
}

// generic returns the excerpt of the first failed step that has one
// (failed), or of the last step that has one (no step failed).
func (d *deferred) generic(failed bool) (string, error) {
	if failed {
		for _, sp := range d.failed {
			if g, err := d.excerpt(sp, true); err != nil || g != "" {
				return g, err
			}
		}
		if d.failedMore {
			return "", errRescan
		}
		return "", nil
	}
	for i := d.nLast - 1; i >= max(0, d.nLast-maxLaterSteps); i-- {
		if g, err := d.excerpt(d.last[i%maxLaterSteps], false); err != nil || g != "" {
			return g, err
		}
	}
	if d.nLast > maxLaterSteps {
		return "", errRescan
	}
	return "", nil
}

// excerpt reads the step at sp again, alone, and returns its excerpt.
func (d *deferred) excerpt(sp stepSpan, failed bool) (string, error) {
	if sp.end <= sp.start {
		return "", nil
	}
	if _, err := d.rs.Seek(d.origin+sp.start, io.SeekStart); err != nil {
		return "", fmt.Errorf("read the log again: %w", err)
	}
	s, err := scan(io.LimitReader(d.rs, sp.end-sp.start), d.opt, nil, sp.start == 0)
	if err != nil {
		return "", fmt.Errorf("read the log again: %w", err)
	}
	// The step is the only one with lines: a step created before its first
	// line (a "Run" group line ends the empty one) or after its exit line
	// has none.
	if failed {
		return s.generic, nil
	}
	return s.otherG, nil
}

// extractSeekable is extractLines on a seekable input starting at origin
// in rs, with the generic excerpt deferred; br reads rs from origin.
func extractSeekable(br io.Reader, rs io.ReadSeeker, origin int64, opt Options) (*FailureContext, error) {
	s, err := scan(br, opt, newDeferred(rs, origin, opt), true)
	if err != nil {
		return nil, err
	}
	fc, err := s.result()
	if !errors.Is(err, errRescan) {
		return fc, err
	}
	if _, err := rs.Seek(origin, io.SeekStart); err != nil {
		return nil, fmt.Errorf("read the log again: %w", err)
	}
	return extractLines(bufio.NewReaderSize(rs, readBuffer), opt)
}
