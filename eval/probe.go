package eval

import (
	"context"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"
)

// probeTimeout bounds one toolchain probe (a version check).
const probeTimeout = 30 * time.Second

// probe is one toolchain check, run once per eval however many tasks need it.
type probe struct {
	once sync.Once
	err  error
}

// skipReason says why a task cannot run here, or "".
func (r *runner) skipReason(ctx context.Context, t *Task) string {
	if t.ScriptedOnly && r.o.real() {
		return "scripted-only scenario: it times the harness against a scripted trajectory"
	}
	if t.Kind == KindFlaky && r.o.Source == "" {
		return fmt.Sprintf("flaky task: its fixture %s is in mini-agent's source tree, not found here (%v); run the eval from a checkout or pass --source DIR",
			t.Flaky.Fixture, r.srcErr)
	}
	for _, argv := range t.Requires {
		if err := r.probe(ctx, argv); err != nil {
			return fmt.Sprintf("toolchain missing: `%s`: %v", strings.Join(argv, " "), err)
		}
	}
	return ""
}

func (r *runner) probe(ctx context.Context, argv []string) error {
	key := strings.Join(argv, "\x00")
	r.mu.Lock()
	p, ok := r.probes[key]
	if !ok {
		p = &probe{}
		r.probes[key] = p
	}
	r.mu.Unlock()
	p.once.Do(func() { p.err = runProbe(ctx, argv) })
	return p.err
}

// runProbe checks that argv[0] is on PATH and that argv exits 0.
func runProbe(ctx context.Context, argv []string) error {
	if _, err := exec.LookPath(argv[0]); err != nil {
		return fmt.Errorf("%s is not on PATH", argv[0])
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.WaitDelay = time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
		if len(line) > 200 {
			line = line[:200]
		}
		if line != "" {
			return fmt.Errorf("%w: %s", err, line)
		}
		return err
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
