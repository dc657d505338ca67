package publish_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/org/mini-agent/internal/bundle"
	"github.com/org/mini-agent/internal/config"
	"github.com/org/mini-agent/internal/publish"
	"github.com/org/mini-agent/internal/route"
)

// StatusOf is the one mapping from the bundle's vocabulary to the action's.
func TestStatusOf(t *testing.T) {
	t.Parallel()
	cases := []struct {
		run       bundle.Status
		delivered bool
		want      publish.Status
	}{
		{bundle.StatusFixed, true, publish.StatusFixed},
		{bundle.StatusFixed, false, publish.StatusNotFixed},
		{bundle.StatusExplained, false, publish.StatusExplained},
		{bundle.StatusNothingToFix, false, publish.StatusSkipped},
		{bundle.StatusNotFixed, false, publish.StatusNotFixed},
		{bundle.StatusValidationFailed, false, publish.StatusNotFixed},
		{bundle.StatusCancelled, false, publish.StatusNotFixed},
		// Delivery makes only a fixed run "fixed".
		{bundle.StatusNotFixed, true, publish.StatusNotFixed},
		{bundle.StatusValidationFailed, true, publish.StatusNotFixed},
		{bundle.StatusCancelled, true, publish.StatusNotFixed},
		{bundle.Status("bogus"), true, publish.StatusNotFixed},
		{"", false, publish.StatusNotFixed},
	}
	for _, c := range cases {
		if got := publish.StatusOf(c.run, c.delivered); got != c.want {
			t.Errorf("StatusOf(%q, %v) = %q, want %q", c.run, c.delivered, got, c.want)
		}
	}
	// Every run status maps to an action status, never to "failed".
	for _, s := range bundle.Statuses {
		for _, d := range []bool{false, true} {
			if got := publish.StatusOf(s, d); got == publish.StatusFailed || got == "" {
				t.Errorf("StatusOf(%q, %v) = %q", s, d, got)
			}
		}
	}
}

// A bundle whose status is not a run status, or that says "explained"
// without being a read-only run, is refused whole: StatusOf never sees it.
func TestCheckRefusesBadRunStatus(t *testing.T) {
	t.Parallel()
	for name, b := range map[string]*bundle.Bundle{
		"unknown":             {Version: bundle.Version, Mode: "fix", Status: "done"},
		"empty":               {Version: bundle.Version, Mode: "fix"},
		"explained, fix mode": {Version: bundle.Version, Mode: "fix", Status: bundle.StatusExplained},
	} {
		if _, err := publish.Check(b, config.Default()); !errors.Is(err, publish.ErrRefused) || !strings.Contains(err.Error(), "status") &&
			!strings.Contains(err.Error(), "explained") {
			t.Errorf("%s: Check = %v, want ErrRefused", name, err)
		}
	}
	ok := &bundle.Bundle{Version: bundle.Version, Mode: "explain", Status: bundle.StatusExplained}
	if _, err := publish.Check(ok, config.Default()); err != nil {
		t.Errorf("an explain bundle was refused: %v", err)
	}
}

// A fix run that found nothing to fix, published under a read-only route,
// ends "skipped" as it does under any other route (StatusOf), not
// "not-fixed".
func TestNothingToFixReadOnlyRoute(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	b := makeBundle(t, f.head, edit{})
	b.Status, b.Diff, b.Files = bundle.StatusNothingToFix, "", nil
	for _, w := range []route.Write{route.WriteNone, route.WritePropose} {
		res, err := publish.Publish(t.Context(), f.gh, publish.Request{Bundle: b, Job: f.job(w), Config: config.Default()})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != publish.StatusSkipped {
			t.Errorf("%s route: status %q (%s), want skipped", w, res.Status, res.Reason)
		}
	}
}
