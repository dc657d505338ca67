//go:build !unix

package proc

import (
	"os"
	"os/exec"
)

// Process groups are a Unix notion. Elsewhere (Windows release builds) only
// the direct child is killed; its own children may survive it.

func setProcessGroup(*exec.Cmd) {}

func termGroup(p *os.Process) { killGroup(p) }

// killGroup kills the child through its handle; after Wait this is a no-op,
// never a kill of whatever process reused the pid.
func killGroup(p *os.Process) { _ = p.Kill() }

func exitSignal(*os.ProcessState) string { return "" }
