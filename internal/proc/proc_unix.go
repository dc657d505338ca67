//go:build unix

package proc

import (
	"os"
	"os/exec"
	"syscall"
)

// setProcessGroup makes the child the leader of a new process group, so the
// whole tree it spawns can be signalled at once.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// termGroup sends SIGTERM to every process of the group p leads.
func termGroup(p *os.Process) { signalGroup(p.Pid, syscall.SIGTERM) }

// killGroup sends SIGKILL to every process of the group p leads. The group
// (and its id, which the kernel does not reuse meanwhile) outlives its leader
// while any member lives, so this also reaches orphans after the leader exited.
func killGroup(p *os.Process) { signalGroup(p.Pid, syscall.SIGKILL) }

func signalGroup(pgid int, sig syscall.Signal) {
	if pgid > 0 {
		_ = syscall.Kill(-pgid, sig) // ESRCH: the group is already gone
	}
}

// exitSignal names the signal that killed the process, if one did.
func exitSignal(ps *os.ProcessState) string {
	if ps == nil {
		return ""
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal().String()
	}
	return ""
}
