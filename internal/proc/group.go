package proc

import (
	"os/exec"
	"time"
)

// Contain puts cmd (built with exec.CommandContext) in its own process group
// and makes the end of its context kill the whole group, grandchildren
// included. waitDelay bounds how long Wait then waits for output pipes a
// surviving descendant still holds. Call it before Start.
func Contain(cmd *exec.Cmd, waitDelay time.Duration) {
	setProcessGroup(cmd)
	cmd.Cancel = func() error {
		killGroup(cmd.Process)
		return nil
	}
	cmd.WaitDelay = waitDelay
}
