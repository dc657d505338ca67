// Package sandboxtest holds what the hostile-test-code tests of several
// packages share: a process outside the sandbox for sandboxed code to
// attack. Test support only.
//
// Test fake: tests only; product code never imports it.
package sandboxtest

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// Victim starts a process outside any sandbox holding a canary in its
// environment ("CANARY_SECRET=..."), as nobody when asNobody and the test
// runs as root (the user hostile code runs as on a hosted runner). It is
// killed when the test ends.
func Victim(t testing.TB, asNobody bool) (*exec.Cmd, string) {
	t.Helper()
	canary := "CANARY_SECRET=canary-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	cmd := exec.Command("sleep", "120")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), canary}
	if asNobody && os.Getuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, canary
}
