package failure

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// maxLaterSteps bounds the steps a deferred reading remembers; a log with
// more is read again whole, the plain way.
const maxLaterSteps = 4096

// errRescan says that the input must be read again whole to build the
// result (more steps than were remembered).
var errRescan = errors.New("failure: the log must be read again whole")

// stepSpan is where a step's lines are in the input: [start, end).
type stepSpan struct{ start, end int64 }

// laterStep is a step noted by a deferred reading.
type laterStep struct {
	stepSpan
	failed bool
	later  bool // its recognizers have not read it yet
	// read: the step was read again alone, which gave text, its generic
	// excerpt.
	read bool
	text string
}

// deferred is a reading of a seekable input that leaves work for when the
// result needs it. Of an Actions log, what matters is mostly the failed
// step; the other steps' findings are used only when no step failed (or
// the failed ones gave nothing and none exited), and the generic excerpt
// only when nothing was recognized. So the first reading reads the first
// step only (all of a log without steps: raw output is read once) and
// notes where the other steps start and end and which failed; the steps
// whose findings or excerpt the result needs are then read again, each
// alone. That gives what one reading would have: a step's lines,
// recognizers and excerpt do not depend on the other steps (each step has
// its own), and findings are merged in the order of the steps.
type deferred struct {
	rs     io.ReadSeeker
	origin int64 // where the input starts in rs
	opt    Options
	proj   *project

	steps []laterStep
	more  bool // more steps than kept
}

func newDeferred(rs io.ReadSeeker, origin int64, opt Options) *deferred {
	return &deferred{rs: rs, origin: origin, opt: opt, proj: newProject(opt.Workspace)}
}

// step notes a finished step.
func (d *deferred) step(st laterStep) {
	if len(d.steps) >= maxLaterSteps {
		d.more = true
		return
	}
	d.steps = append(d.steps, st)
}

// merge adds to col, in order, the findings of the failed steps (or of
// the others) that the first reading left for later.
func (d *deferred) merge(col *collector, failed bool) error {
	if d.more {
		return errRescan
	}
	for i := range d.steps {
		st := &d.steps[i]
		if st.failed != failed || !st.later {
			continue
		}
		s, err := d.read(st, false)
		if err != nil {
			return err
		}
		if failed {
			col.merge(s.failed)
		} else {
			col.merge(s.other)
		}
	}
	return nil
}

// generic returns the excerpt of the first failed step that has one
// (failed), or of the last step that has one (no step failed).
func (d *deferred) generic(failed bool) (string, error) {
	if d.more {
		return "", errRescan
	}
	excerpt := func(st *laterStep) (string, error) {
		if !st.read {
			if _, err := d.read(st, true); err != nil {
				return "", err
			}
		}
		return st.text, nil
	}
	if failed {
		for i := range d.steps {
			if st := &d.steps[i]; st.failed {
				if g, err := excerpt(st); err != nil || g != "" {
					return g, err
				}
			}
		}
		return "", nil
	}
	for i := len(d.steps) - 1; i >= 0; i-- {
		if g, err := excerpt(&d.steps[i]); err != nil || g != "" {
			return g, err
		}
	}
	return "", nil
}

// read reads the step st again, alone: for its findings only, or with
// its excerpt (noted in st), built as one reading builds it. (The excerpt
// is needed only when the step recognized nothing, which its findings
// tell; building it while looking for them would cost the error-word scan
// of every line up to the first finding, most often for nothing.)
func (d *deferred) read(st *laterStep, excerpt bool) (*segmenter, error) {
	if _, err := d.rs.Seek(d.origin+st.start, io.SeekStart); err != nil {
		return nil, fmt.Errorf("read the log again: %w", err)
	}
	opt := d.opt
	if excerpt {
		// The excerpt is wanted only when nothing was recognized (see
		// generic): the recognizers would find nothing again, and the
		// lines go to the excerpt alone, as they would with them.
		opt.excerptOnly = true
	}
	s, err := scan(io.LimitReader(d.rs, max(0, st.end-st.start)), opt, d.proj, nil, st.start == 0, !excerpt)
	if err != nil {
		return nil, fmt.Errorf("read the log again: %w", err)
	}
	if !excerpt {
		return s, nil
	}
	// The step is the only one with lines: a step created before its first
	// line (a "Run" group line ends the empty one) or after its exit line
	// has none.
	st.read = true
	if st.failed {
		st.text = s.generic
	} else {
		st.text = s.otherG
	}
	return s, nil
}

// extractSeekable is extractLines on a seekable input starting at origin
// in rs, with the generic excerpt deferred; br reads rs from origin.
func extractSeekable(br io.Reader, rs io.ReadSeeker, origin int64, opt Options) (*FailureContext, error) {
	d := newDeferred(rs, origin, opt)
	s, err := scan(br, opt, d.proj, d, true, false)
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
