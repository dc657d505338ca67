package testcmd

import (
	"slices"
	"strings"
)

// Notes Uncached adds.
const (
	goUncachedNote      = "-count=1 was added so that go test runs the tests instead of replaying a cached pass"
	pytestUncachedNote  = "-p no:cacheprovider was added so that pytest neither reads nor writes .pytest_cache: no --lf, --ff or --sw state from an earlier run applies"
	npmUncachedNote     = "the runner's own caches are not controlled (npm test runs the package's test script, which testcmd does not read)"
	unknownUncachedNote = "the runner's own caches are not controlled (shell syntax or an unknown runner)"
)

// Uncached returns a copy of the invocation with the runner's result
// caches switched off, so that the run executes the tests instead of
// answering from, or depending on, an earlier run. It is what the
// harness's own runs (baseline, validation, stress) use as proof; the
// model's runs keep the runner's defaults. A note in Notes says what was
// added; nothing is added, and no note, when the command does it already
// or the runner has no such cache.
//
// Per runner:
//
//	go test      -count=1 right after "go test", unless the command has a
//	             -count (or -test.count) flag of its own before -args: go
//	             test replays a cached pass unless a flag outside its
//	             cacheable set is given, and any -count is one (-count=1 is
//	             the idiom). A -count after -args goes to the test binary
//	             and does not count. Stress's -count replaces the command's
//	             own, so Uncached after Stress keeps it.
//	pytest       -p no:cacheprovider right after the runner, unless the
//	             command has it: the cache provider keeps .pytest_cache
//	             (written into the tree), which --lf, --ff, --nf and --sw
//	             read to choose and order tests from an earlier run. Those
//	             options (and --cache-show, --cache-clear, --lfnf) belong
//	             to the plugin and pytest refuses them once it is off, so
//	             the command's own copies are dropped, with a note.
//	cargo test   nothing: cargo caches builds (target/), never test
//	             results; every run executes the test binaries.
//	jest         nothing: jest never replays results. Its cache
//	             (--no-cache) is the transform cache, keyed on the source,
//	             and its per-file timings and failures only order the
//	             files; every selected test runs. (A command's own
//	             --onlyFailures still selects from the earlier run.)
//	vitest       nothing: vitest never replays results; its results cache
//	             (--no-cache) orders failed and slow files first. (A
//	             command's own --last-failed, in versions that have it,
//	             still selects from the earlier run.)
//	npm test     nothing: the script's runner is not known here (a note
//	             says so); the JavaScript runners above need nothing.
//	other, sh -c nothing can be added; the note says "the runner's own
//	             caches are not controlled (shell syntax or an unknown
//	             runner)". mocha, for one, has no result cache.
//
// Apply it last, after Stress: it composes with the output forms, the
// narrowing and Stress (a Stress Count stays as the run's -count). It is
// idempotent.
func (inv *Invocation) Uncached() *Invocation {
	if len(inv.parts) > 0 {
		out, _ := inv.mapParts(func(p *Invocation) (*Invocation, error) { return p.Uncached(), nil })
		return out
	}
	out := *inv
	out.Argv = slices.Clone(inv.Argv)
	out.Notes = slices.Clone(inv.Notes)
	var notes []string
	switch inv.runner {
	case Go:
		out.Argv, notes = goUncached(inv.Argv, inv.prefix)
	case Pytest:
		out.Argv, notes = pytestUncached(inv.Argv, inv.prefix)
	case Cargo, Jest, Vitest:
		// No result cache to switch off (see above).
	case Npm:
		notes = []string{npmUncachedNote}
	default: // Unknown, and every command in shell syntax
		notes = []string{unknownUncachedNote}
	}
	for _, n := range notes {
		if !slices.Contains(out.Notes, n) {
			out.Notes = append(out.Notes, n)
		}
	}
	return &out
}

// goCountFlags are the spellings of go test's -count.
var goCountFlags = flagSet("-count", "--count", "-test.count", "--test.count")

// goUncached adds -count=1 after the runner's words unless the go test
// flags (before -args) have a -count already.
func goUncached(argv []string, prefix int) ([]string, []string) {
	args := argv[prefix:]
	if i := slices.IndexFunc(args, func(a string) bool { return a == "-args" || a == "--args" }); i >= 0 {
		args = args[:i] // the test binary's arguments
	}
	flags, _, _ := splitFlags(args, goValueFlags, nil)
	for _, f := range flags {
		if goCountFlags[f.name] {
			return slices.Clone(argv), nil
		}
	}
	return slices.Concat(argv[:prefix], []string{"-count=1"}, argv[prefix:]), []string{goUncachedNote}
}

var (
	// pytestCacheOptions are the options of pytest's cacheprovider plugin
	// and of stepwise, which pytest blocks with it: with -p
	// no:cacheprovider pytest refuses them as unrecognized arguments.
	pytestCacheOptions = flagSet("--lf", "--last-failed", "--ff", "--failed-first", "--nf", "--new-first",
		"--lfnf", "--last-failed-no-failures", "--cache-show", "--cache-clear",
		"--sw", "--stepwise", "--sw-skip", "--stepwise-skip", "--sw-reset", "--stepwise-reset")
	// pytestCacheValue take a separate value; pytestCacheOptValue one that
	// is not a flag (nargs='?').
	pytestCacheValue    = flagSet("--lfnf", "--last-failed-no-failures")
	pytestCacheOptValue = flagSet("--cache-show")
)

// pytestUncached adds -p no:cacheprovider after the runner's words and
// drops the options that need the plugin, unless the command blocks the
// plugin already. Everything else keeps its place: only the dropped words
// leave, so a flag's value unknown here cannot be separated from it.
func pytestUncached(argv []string, prefix int) ([]string, []string) {
	args := argv[prefix:]
	var kept, dropped []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			kept = append(kept, args[i:]...)
			break
		}
		name, _, hasValue := strings.Cut(a, "=")
		switch {
		case a == "-p" && i+1 < len(args):
			if strings.TrimSpace(args[i+1]) == "no:cacheprovider" {
				return slices.Clone(argv), nil
			}
			kept = append(kept, a, args[i+1])
			i++
		case strings.HasPrefix(a, "-p") && !strings.HasPrefix(a, "--") && strings.TrimSpace(a[2:]) == "no:cacheprovider":
			return slices.Clone(argv), nil // pytest reads "-pNAME" too
		case pytestCacheOptions[name]:
			words := []string{a}
			if !hasValue && i+1 < len(args) &&
				(pytestCacheValue[a] || pytestCacheOptValue[a] && !strings.HasPrefix(args[i+1], "-")) {
				words = append(words, args[i+1])
				i++
			}
			dropped = append(dropped, strings.Join(words, " "))
		case !hasValue && i+1 < len(args) &&
			(pytestValueFlags[a] || pytestOptValueFlags[a] && !strings.HasPrefix(args[i+1], "-")):
			kept = append(kept, a, args[i+1]) // the value is never read as an option
			i++
		default:
			kept = append(kept, a)
		}
	}
	notes := []string{pytestUncachedNote}
	for _, d := range dropped {
		notes = append(notes, "the command's own "+d+" was dropped: it needs pytest's cache provider, which is off for this run")
	}
	return slices.Concat(argv[:prefix], []string{"-p", "no:cacheprovider"}, kept), notes
}
