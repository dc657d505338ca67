package hang

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// TestHang starts a child that outlives it unless killed, writes both
// process ids where HANG_PIDS says, and blocks.
func TestHang(t *testing.T) {
	child := exec.Command("sleep", "600")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	pids := strconv.Itoa(os.Getpid()) + " " + strconv.Itoa(child.Process.Pid) + "\n"
	if err := os.WriteFile(os.Getenv("HANG_PIDS"), []byte(pids), 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Minute)
}
