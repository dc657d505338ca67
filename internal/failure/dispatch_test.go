package failure

import (
	"strings"
	"testing"
)

// TestHasGroupMatch compares the anchored search of substring triggers
// with strings.Contains, for the real recognizers' triggers and for
// made-up ones (anchors repeated in a trigger, triggers overlapping),
// on every cut of strings holding them, near misses and repeats.
func TestHasGroupMatch(t *testing.T) {
	t.Parallel()
	real := newDispatcher(newRecognizers(newCollector(newProject(""))))
	made := &dispatcher{}
	madeSubs := []string{"EE", "xEyE", "E", "AEA", "error TS", "zz"}
	for i, sub := range madeSubs {
		made.addHas(sub, 1<<(i%3), madeSubs)
	}
	if len(real.has) != 2 || real.has[0].anchor != 'E' || len(real.has[0].subs) != 2 {
		t.Errorf("the pytest triggers do not share one anchor: %+v", real.has)
	}
	texts := []string{"x FAILED y", "FAILED", " FAILE D FAILED", "error TSerror TS", "errorerror T error TS",
		"aaa", "EEE", " ERRO R ERROR", "  FAILEDD", "error T", "ÉD error TS\xff", "xEyExEyE", "AEAEA", "zzz",
		"tests/test_x.py::test_a FAILED [ 50%]", " ERROR at setup of test_b", "a.ts(1,2): error TS2345: x"}
	for _, d := range []*dispatcher{real, made} {
		for _, text := range texts {
			for i := 0; i <= len(text); i++ {
				for j := i; j <= len(text); j++ {
					s := text[i:j]
					for _, g := range d.has {
						var want uint16
						for _, a := range g.subs {
							if strings.Contains(s, a.sub) {
								want |= a.bit
							}
						}
						for _, ask := range []uint16{0xffff, g.mask, g.subs[0].bit} {
							if got := g.match(s, ask); got != want&ask {
								t.Errorf("anchor %q: match(%q, %b) = %b, want %b", g.anchor, s, ask, got, want&ask)
							}
						}
					}
				}
			}
		}
	}
}
