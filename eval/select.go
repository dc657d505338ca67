package eval

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Task sets: the tasks of one kind, or all of them.
const (
	// SetAgent is the agent tasks (the default set).
	SetAgent = KindAgent
	// SetFlaky is the flaky tasks: slow (each stress-runs a fixture to
	// find the flake, then reruns to the bar), so not in the default set.
	SetFlaky = KindFlaky
	// SetAll is every task.
	SetAll = "all"
)

// Sets are the task sets, for help texts.
var Sets = []string{SetAgent, SetFlaky, SetAll}

func setName(set string) string {
	if set == "" {
		return SetAgent
	}
	return set
}

// InSet keeps the tasks of the set ("" means SetAgent). An empty result
// is not an error (a tasks directory may hold only one kind).
func InSet(tasks []*Task, set string) ([]*Task, error) {
	if !slices.Contains(Sets, setName(set)) {
		return nil, fmt.Errorf("--set %q: want one of %s", set, strings.Join(Sets, ", "))
	}
	var out []*Task
	for _, t := range tasks {
		kind := t.Kind
		if kind == "" {
			kind = KindAgent
		}
		if setName(set) == SetAll || kind == setName(set) {
			out = append(out, t)
		}
	}
	return out, nil
}

// Shard is one part of a split eval: tasks sorted by name are dealt round
// robin, task k (0-based) going to shard k%Of + 1. Index is 1-based.
type Shard struct {
	Index, Of int
}

// ParseShard reads "i/n" with 1 <= i <= n.
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return Shard{}, fmt.Errorf("shard %q: want i/n with 1 <= i <= n, e.g. 2/4", s)
	}
	return Shard{Index: i, Of: n}, nil
}

// Select filters tasks (already sorted by name) and keeps the shard's part.
// filter is a comma-separated list of task names, or else a regular
// expression matched against names; empty keeps every task. A filter that
// matches nothing is an error (a typo must not pass as an empty success);
// an empty shard is not.
func Select(tasks []*Task, filter string, shard Shard) ([]*Task, error) {
	picked := tasks
	if filter = strings.TrimSpace(filter); filter != "" {
		var err error
		if picked, err = filterTasks(tasks, filter); err != nil {
			return nil, err
		}
	}
	if shard.Of <= 1 {
		return picked, nil
	}
	var out []*Task
	for k, t := range picked {
		if k%shard.Of == shard.Index-1 {
			out = append(out, t)
		}
	}
	return out, nil
}

func filterTasks(tasks []*Task, filter string) ([]*Task, error) {
	byName := map[string]*Task{}
	for _, t := range tasks {
		byName[t.Name] = t
	}
	names := strings.Split(filter, ",")
	var listed []*Task
	for _, n := range names {
		t, ok := byName[strings.TrimSpace(n)]
		if !ok {
			listed = nil
			break
		}
		listed = append(listed, t)
	}
	if listed != nil {
		// Keep the sorted order, drop repeats.
		var out []*Task
		for _, t := range tasks {
			for _, l := range listed {
				if l == t {
					out = append(out, t)
					break
				}
			}
		}
		return out, nil
	}
	re, err := regexp.Compile(filter)
	if err != nil {
		return nil, fmt.Errorf("--tasks %q: neither a list of task names nor a valid regexp: %w", filter, err)
	}
	var out []*Task
	for _, t := range tasks {
		if re.MatchString(t.Name) {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--tasks %q matches no task", filter)
	}
	return out, nil
}
