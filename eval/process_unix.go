//go:build unix

package eval

import (
	"bytes"
	"fmt"
	"os"
	"syscall"
)

// processAlive reports whether pid exists and is not a zombie (an exited
// process its new parent has not reaped yet is gone for our purpose).
func processAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // no procfs (macOS): the signal probe decides
	}
	// The state follows the parenthesised command name: "pid (comm) S ...".
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] != 'Z'
	}
	return true
}

func killProcess(pid int) { _ = syscall.Kill(pid, syscall.SIGKILL) }
