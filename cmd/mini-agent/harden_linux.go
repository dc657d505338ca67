//go:build linux

package main

import "syscall"

// hardenProcess marks the process non-dumpable: code the model wrote runs
// as a test under the same user, and could otherwise read this process's
// /proc/<pid>/environ, where the GitHub token and API keys live. (Root
// keeps access; GitHub's hosted runners run jobs as a non-root user.)
func hardenProcess() {
	const prSetDumpable = 4
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetDumpable, 0, 0)
}
