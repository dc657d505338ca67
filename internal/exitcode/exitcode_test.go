package exitcode

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/org/mini-agent/agent/provider/pricing"
	"github.com/org/mini-agent/internal/bundle"
	"github.com/org/mini-agent/internal/config"
	"github.com/org/mini-agent/internal/flaky"
	"github.com/org/mini-agent/internal/pipeline"
	"github.com/org/mini-agent/internal/publish"
	"github.com/org/mini-agent/internal/route"
)

func TestForErrors(t *testing.T) {
	t.Parallel()
	live := context.Background()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	wrap := func(err error) error { return fmt.Errorf("layer: %w", err) }
	for _, c := range []struct {
		name        string
		ctx         context.Context
		err         error
		local, acts int
	}{
		{"nil", live, nil, OK, OK},
		{"pipeline config", live, wrap(&pipeline.ConfigError{Field: "workdir", Problem: " is required"}), Usage, Usage},
		{"provider config", live, wrap(fmt.Errorf("%w: no key", pricing.ErrConfig)), Usage, Usage},
		{"budget", live, &pricing.BudgetError{Budget: 1, Model: "m"}, Usage, Usage},
		{"policy file", live, wrap(&config.Error{Path: ".github/mini-agent.yml", Problems: []string{"x"}}), Usage, Usage},
		{"event", live, wrap(fmt.Errorf("%w: bad payload", route.ErrEvent)), Usage, Usage},
		{"usagef", live, Usagef("bad inputs: %s", "x"), Usage, Usage},
		{"usage wins over cancel", cancelled, Usagef("bad"), Usage, Usage},
		{"cancelled ctx", cancelled, errors.New("signal: killed"), Cancelled, Cancelled},
		{"context.Canceled", live, wrap(context.Canceled), Cancelled, Cancelled},
		{"other", live, errors.New("GitHub answered 502"), NotFixed, Failed},
	} {
		if got := For(c.ctx, c.err); got != c.local {
			t.Errorf("%s: For = %d, want %d", c.name, got, c.local)
		}
		if got := ForAction(c.ctx, c.err); got != c.acts {
			t.Errorf("%s: ForAction = %d, want %d", c.name, got, c.acts)
		}
	}
}

func TestUsagefKeepsTheChain(t *testing.T) {
	t.Parallel()
	inner := errors.New("inner")
	err := Usagef("reading: %w", inner)
	if !errors.Is(err, ErrUsage) || !errors.Is(err, inner) || err.Error() != "reading: inner" {
		t.Fatalf("Usagef: %v (is usage %v, is inner %v)", err, errors.Is(err, ErrUsage), errors.Is(err, inner))
	}
}

func TestForStatus(t *testing.T) {
	t.Parallel()
	// Every status has its code decided here, and only a finished run's
	// is 0.
	codes := map[int]bool{}
	for _, st := range bundle.Statuses {
		codes[ForStatus(st)] = true
	}
	if len(codes) != 5 || !codes[Refused] {
		t.Errorf("the statuses map to codes %v", codes)
	}
	for status, want := range map[bundle.Status]int{
		bundle.StatusFixed: OK, bundle.StatusExplained: OK, bundle.StatusNothingToFix: OK,
		bundle.StatusNotFixed: NotFixed, bundle.StatusValidationFailed: ValidationFailed, bundle.StatusCancelled: Cancelled,
		bundle.StatusRefused: Refused, bundle.StatusNotReproduced: NotFixed, "": NotFixed,
	} {
		if got := ForStatus(status); got != want {
			t.Errorf("ForStatus(%q) = %d, want %d", status, got, want)
		}
	}
}

// An output that could not be written turns a success into NotFixed and
// leaves every other code alone.
func TestForRun(t *testing.T) {
	t.Parallel()
	refused := errors.New("write bundle: bundle.json is a symbolic link: mini-agent does not write through links")
	for _, c := range []struct {
		status  bundle.Status
		outputs error
		want    int
	}{
		{bundle.StatusFixed, nil, OK},
		{bundle.StatusFixed, refused, NotFixed},
		{bundle.StatusExplained, refused, NotFixed},
		{bundle.StatusNothingToFix, refused, NotFixed},
		{bundle.StatusValidationFailed, refused, ValidationFailed},
		{bundle.StatusCancelled, refused, Cancelled},
		{bundle.StatusNotFixed, refused, NotFixed},
		{bundle.StatusRefused, nil, Refused},
		{bundle.StatusRefused, refused, Refused},
	} {
		if got := ForRun(c.status, c.outputs); got != c.want {
			t.Errorf("ForRun(%q, %v) = %d, want %d", c.status, c.outputs, got, c.want)
		}
	}
}

func TestForPublished(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		outcome publish.Status
		bundle  bundle.Status
		want    int
	}{
		{publish.StatusFixed, bundle.StatusFixed, OK},
		{publish.StatusExplained, bundle.StatusExplained, OK},
		{publish.StatusSkipped, "", OK},
		{publish.StatusAnswered, "", OK},
		{publish.StatusNotFixed, bundle.StatusNotFixed, NotFixed},
		{publish.StatusNotFixed, bundle.StatusValidationFailed, ValidationFailed},
		// The action reports a refusal as not-fixed; its code says why.
		{publish.StatusOf(bundle.StatusRefused, false), bundle.StatusRefused, Refused},
		{publish.StatusFailed, bundle.StatusFixed, Failed},
		{"unknown", bundle.StatusFixed, Failed},
	} {
		if got := ForPublished(c.outcome, c.bundle); got != c.want {
			t.Errorf("ForPublished(%q, %q) = %d, want %d", c.outcome, c.bundle, got, c.want)
		}
	}
}

func TestForFlaky(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		flakyN, failingN int
		fix              flaky.FixStatus
		bundle           bundle.Status
		want             int
	}{
		{0, 0, "", "", OK},
		{1, 0, "", "", NotFixed},
		{0, 1, "", "", NotFixed},
		{1, 0, flaky.FixProven, bundle.StatusFixed, OK},
		{1, 1, flaky.FixProven, bundle.StatusFixed, NotFixed},
		{2, 0, flaky.FixProven, bundle.StatusFixed, NotFixed},
		{1, 0, flaky.FixUnproven, "", NotFixed},
		{1, 0, flaky.FixUnproven, bundle.StatusRefused, Refused},
		{1, 0, flaky.FixFailedBar, bundle.StatusFixed, ValidationFailed},
		{1, 0, flaky.FixRejected, bundle.StatusFixed, ValidationFailed},
	} {
		if got := ForFlaky(c.flakyN, c.failingN, c.fix, c.bundle); got != c.want {
			t.Errorf("ForFlaky(%d, %d, %q, %q) = %d, want %d", c.flakyN, c.failingN, c.fix, c.bundle, got, c.want)
		}
	}
}
