//go:build !linux

package proc

import "os/exec"

// Outside Linux there is no subreaper or cgroup: a run is its process
// group, and a process that leaves the group is not found again.

// EnableSubreaper reports false: there is no child subreaper here.
func EnableSubreaper() bool { return false }

type runRecord struct{}

func setRunAttrs(cmd *exec.Cmd, _ bool) *runRecord {
	setProcessGroup(cmd)
	return &runRecord{}
}

func beginStart() {}
func endStart()   {}

func (*runRecord) startFailed(*exec.Cmd) bool { return false }
func (*runRecord) started(int)                {}
func (*runRecord) mechanism() string          { return "process group only" }
func (*runRecord) endRun() int                { return 0 }
