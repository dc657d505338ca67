//go:build linux

package main

import (
	"syscall"

	"github.com/org/mini-agent/internal/proc"
)

// hardenProcess marks the process non-dumpable: code the model wrote runs
// as a test under the same user, and could otherwise read this process's
// /proc/<pid>/environ, where the GitHub token and API keys live. (Root
// keeps access; GitHub's hosted runners run jobs as a non-root user.)
// It also makes the process a child subreaper before any child exists, so
// whatever a test run leaves behind (a daemon that called setsid) is
// re-parented here, where run_test finds, kills and reaps it.
func hardenProcess() {
	const prSetDumpable = 4
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetDumpable, 0, 0)
	proc.EnableSubreaper()
}
