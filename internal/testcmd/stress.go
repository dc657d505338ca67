package testcmd

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Bounds on a stress run.
const (
	maxStressCount = 10000
	maxStressCPUs  = 16
	maxCPUValue    = 1024
)

// ErrUnsupported is wrapped by Stress when the runner has no flags for
// what is asked: the caller repeats whole runs instead.
var ErrUnsupported = errors.New("not supported by this test runner")

// Stress asks a run to shake out flaky tests. The zero value asks nothing.
type Stress struct {
	// Count runs each test Count times in one process (go test -count).
	Count int
	// Race turns on the race detector (go test -race).
	Race bool
	// Shuffle randomises the test order: "on", or a decimal seed that
	// reproduces an earlier order (go test -shuffle).
	Shuffle string
	// CPU runs each test once per GOMAXPROCS value (go test -cpu 1,2,4).
	CPU []int
}

// IsZero reports a Stress that asks nothing.
func (s Stress) IsZero() bool {
	return s.Count == 0 && !s.Race && s.Shuffle == "" && len(s.CPU) == 0
}

func (s Stress) check() error {
	if s.Count < 0 || s.Count > maxStressCount {
		return fmt.Errorf("count %d is out of range (1 to %d)", s.Count, maxStressCount)
	}
	if s.Shuffle != "" && s.Shuffle != "on" {
		if _, err := strconv.ParseInt(s.Shuffle, 10, 64); err != nil {
			return fmt.Errorf("shuffle %q is neither \"on\" nor a decimal seed", s.Shuffle)
		}
	}
	if len(s.CPU) > maxStressCPUs {
		return fmt.Errorf("%d cpu values (at most %d)", len(s.CPU), maxStressCPUs)
	}
	for _, n := range s.CPU {
		if n < 1 || n > maxCPUValue {
			return fmt.Errorf("cpu value %d is out of range (1 to %d)", n, maxCPUValue)
		}
	}
	return nil
}

// flags are the go test flags for s, in a fixed order.
func (s Stress) flags() []string {
	var f []string
	if s.Count > 0 {
		f = append(f, "-count="+strconv.Itoa(s.Count))
	}
	if s.Race {
		f = append(f, "-race")
	}
	if s.Shuffle != "" {
		f = append(f, "-shuffle="+s.Shuffle)
	}
	if len(s.CPU) > 0 {
		cpus := make([]string, len(s.CPU))
		for i, n := range s.CPU {
			cpus[i] = strconv.Itoa(n)
		}
		f = append(f, "-cpu="+strings.Join(cpus, ","))
	}
	return f
}

// stressFlagNames are the spellings of the flags Stress sets, which the
// command's own copies of are replaced.
func stressFlagNames(s Stress) map[string]bool {
	m := map[string]bool{}
	add := func(names ...string) {
		for _, n := range names {
			m["-"+n], m["--"+n] = true, true
		}
	}
	if s.Count > 0 {
		add("count", "test.count")
	}
	if s.Race {
		add("race")
	}
	if s.Shuffle != "" {
		add("shuffle", "test.shuffle")
	}
	if len(s.CPU) > 0 {
		add("cpu", "test.cpu")
	}
	return m
}

// Stress returns the invocation with s applied: for go test, its flags
// right after "go test", replacing the command's own -count, -race,
// -shuffle or -cpu (a note says which). Other runners, and shell syntax,
// have no such flags: the error wraps ErrUnsupported, and the caller
// repeats the run instead. An out-of-range s is an error.
func (inv *Invocation) Stress(s Stress) (*Invocation, error) {
	if err := s.check(); err != nil {
		return nil, fmt.Errorf("stress: %w", err)
	}
	if s.IsZero() {
		return inv, nil
	}
	if len(inv.parts) > 0 {
		return inv.mapParts(func(p *Invocation) (*Invocation, error) { return p.Stress(s) })
	}
	if inv.runner != Go {
		return nil, fmt.Errorf("stress (-count, -race, -shuffle, -cpu) for %s: %w", inv.runner, ErrUnsupported)
	}
	args := inv.Argv[inv.prefix:]
	var tail []string // -args and what follows belongs to the test binary
	if i := slices.IndexFunc(args, func(a string) bool { return a == "-args" || a == "--args" }); i >= 0 {
		args, tail = args[:i], args[i:]
	}
	flags, positional, rest := splitFlags(args, goValueFlags, nil)
	drop := stressFlagNames(s)
	out := *inv
	out.Notes = slices.Clone(inv.Notes)
	for _, f := range flags {
		if drop[f.name] {
			out.Notes = append(out.Notes, "the command's own "+strings.Join(f.words, " ")+" was replaced")
		}
	}
	out.Argv = slices.Concat(inv.Argv[:inv.prefix], s.flags(),
		joinFlags(flags, func(name string) bool { return drop[name] }), positional, rest, tail)
	return &out, nil
}
