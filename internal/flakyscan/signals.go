package flakyscan

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// maxMessages bounds the distinct messages kept per candidate.
const maxMessages = 5

// sameCode reports whether a failure and a pass ran the same code: two
// attempts of one run, or two runs of one head SHA neither triggered by a
// pull_request-like event.
func sameCode(f, p Occurrence) bool {
	if f.RunID == p.RunID {
		return f.Attempt != p.Attempt
	}
	return f.HeadSHA == p.HeadSHA && !prLike(f.Event) && !prLike(p.Event)
}

// signals returns the flake signals of a test with failures fs whose job
// passed in ps, and the passes they rest on.
func (s *scan) signals(fs []failObs, ps []Occurrence) ([]string, []Occurrence) {
	var sig []string
	used := map[Occurrence]bool{}
	for _, p := range ps {
		for _, f := range fs {
			if sameCode(f.occ, p) {
				used[p] = true
			}
		}
	}
	if len(used) > 0 {
		sig = append(sig, SignalSameCode)
	}
	if between := s.acrossCommits(fs, ps); len(between) > 0 {
		sig = append(sig, SignalAcrossCommit)
		for _, p := range between {
			used[p] = true
		}
	}
	var passes []Occurrence
	for p := range used {
		passes = append(passes, p)
	}
	sortOcc(passes)
	return sig, passes
}

// acrossCommits looks, on the default branch's push-like runs in creation
// order, for a failure, a later pass and a later failure again, with the
// failures on at least two commits. It returns the passes lying between
// a first and a last failure, or nil.
func (s *scan) acrossCommits(fs []failObs, ps []Occurrence) []Occurrence {
	if s.opt.DefaultBranch == "" {
		return nil
	}
	type ev struct {
		occ  Occurrence
		fail bool
	}
	var evs []ev
	shas := map[string]bool{}
	onBranch := func(o Occurrence) bool { return o.Branch == s.opt.DefaultBranch && !prLike(o.Event) }
	for _, f := range fs {
		if onBranch(f.occ) {
			evs = append(evs, ev{f.occ, true})
			shas[f.occ.HeadSHA] = true
		}
	}
	if len(shas) < 2 {
		return nil
	}
	for _, p := range ps {
		if onBranch(p) {
			evs = append(evs, ev{p, false})
		}
	}
	slices.SortStableFunc(evs, func(a, b ev) int { return cmpOcc(a.occ, b.occ) })
	first, last := -1, -1
	for i, e := range evs {
		if e.fail {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	var between []Occurrence
	for _, e := range evs[first+1 : last+1] {
		if !e.fail {
			between = append(between, e.occ)
		}
	}
	return between
}

func cmpOcc(a, b Occurrence) int {
	return cmp.Or(a.RunCreated.Compare(b.RunCreated), cmp.Compare(a.RunID, b.RunID),
		cmp.Compare(a.Attempt, b.Attempt), cmp.Compare(a.JobID, b.JobID))
}

func sortOcc(os []Occurrence) { slices.SortFunc(os, cmpOcc) }

// candidates groups the tests with a flake signal by the set of jobs they
// failed in (tests failing together form one cluster) and ranks the
// clusters by CI time wasted.
func (s *scan) candidates() []Candidate {
	byJobs := map[string]*Candidate{}
	refs := make([]TestRef, 0, len(s.fails))
	for ref := range s.fails {
		refs = append(refs, ref)
	}
	slices.SortFunc(refs, cmpRef) // deterministic messages and members
	for _, ref := range refs {
		fs := s.fails[ref]
		sig, passes := s.signals(fs, s.passes[jobKey{ref.WorkflowID, ref.Job}])
		if len(sig) == 0 {
			continue
		}
		var ids []string
		for _, f := range fs {
			ids = append(ids, fmt.Sprint(f.occ.JobID))
		}
		slices.Sort(ids)
		key := strings.Join(ids, ",")
		c := byJobs[key]
		if c == nil {
			c = &Candidate{Signals: sig, Passes: passes}
			for _, f := range fs {
				c.Failures = append(c.Failures, f.occ)
				c.Wasted += f.occ.Duration
			}
			sortOcc(c.Failures)
			for _, o := range c.Failures {
				if !slices.Contains(c.Commits, o.HeadSHA) {
					c.Commits = append(c.Commits, o.HeadSHA)
				}
			}
			byJobs[key] = c
		}
		c.Tests = append(c.Tests, ref)
		for _, f := range fs {
			if m := strings.TrimSpace(f.message); m != "" && !slices.Contains(c.Messages, m) && len(c.Messages) < maxMessages {
				c.Messages = append(c.Messages, m)
			}
		}
	}
	out := make([]Candidate, 0, len(byJobs))
	for _, c := range byJobs {
		slices.SortFunc(c.Tests, cmpRef)
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b Candidate) int {
		return cmp.Or(cmp.Compare(b.Wasted, a.Wasted), cmp.Compare(len(b.Failures), len(a.Failures)), cmpRef(a.Tests[0], b.Tests[0]))
	})
	return out
}

func cmpRef(a, b TestRef) int {
	return cmp.Or(cmp.Compare(a.Workflow, b.Workflow), cmp.Compare(a.WorkflowID, b.WorkflowID), cmp.Compare(a.Job, b.Job),
		cmp.Compare(a.Package, b.Package), cmp.Compare(a.Test, b.Test))
}

// Minutes is d in minutes, rounded to a tenth, for reports.
func Minutes(d time.Duration) float64 { return float64(d.Round(6*time.Second)) / float64(time.Minute) }
