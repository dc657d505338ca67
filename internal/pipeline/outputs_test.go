//go:build unix

package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/org/mini-agent/agent"
	"github.com/org/mini-agent/internal/demo"
)

// A link or a FIFO already at an output path (planted by an earlier step)
// is refused before the run, naming the flag, the path and what it is;
// nothing is written through it and the model is never asked.
func TestOutputPathThatIsALinkIsRefusedBeforeTheRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := demo.Materialize(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	victim := filepath.Join(t.TempDir(), "env")
	if err := os.WriteFile(victim, []byte("victim\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link, fifo := filepath.Join(out, "link"), filepath.Join(out, "fifo")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		job   Job
		field string
		says  string
	}{
		{Job{BundlePath: link}, "bundle", link + " is a symbolic link: mini-agent does not write through links"},
		{Job{SummaryPath: link}, "summary", link + " is a symbolic link: mini-agent does not write through links"},
		{Job{TracePath: link}, "trace", link + " is a symbolic link: mini-agent does not write through links"},
		{Job{SummaryPath: fifo}, "summary", fifo + " is a named pipe, not a regular file"},
		{Job{TracePath: out}, "trace", out + " is a directory, not a regular file"},
	} {
		m := &scripted{outs: []agent.Output{{Message: "## Summary\nx\n## Root cause\nx\n## Assumptions\nnone"}}}
		o := c.job
		o.Mode, o.Workdir, o.TestCommand = agent.ModeExplain, dir, "go test ./..."
		_, err := Run(context.Background(), o, Deps{Model: script(m)})
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Field != c.field || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%+v: err %v, want a ConfigError for %s saying %q", c.job, err, c.field, c.says)
		}
		if len(m.outs) != 1 {
			t.Errorf("%+v: the model was asked before the outputs were checked", c.job)
		}
	}
	if data, _ := os.ReadFile(victim); string(data) != "victim\n" {
		t.Errorf("the file outside was written: %q", data)
	}
}
