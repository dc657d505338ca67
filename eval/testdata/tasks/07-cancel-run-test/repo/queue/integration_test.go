package queue

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// TestWorkerIntegration starts the worker helper and waits for it: a slow
// suite, as integration tests against external services are. The helper's
// pid goes to $EVAL_SCRATCH/sleep.pid so the eval can check that an
// interrupt kills it. The service is there only where slow.marker is (an
// ignored file of the workspace, as a local service would be): the clean
// checkouts the harness reproduces and validates on do not have it.
func TestWorkerIntegration(t *testing.T) {
	if _, err := os.Stat("slow.marker"); err != nil {
		t.Skip("no integration environment here")
	}
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	dir := os.Getenv("EVAL_SCRATCH")
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.WriteFile(filepath.Join(dir, "sleep.pid"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
}
