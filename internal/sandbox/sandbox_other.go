//go:build !linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
)

// Probe reports that there is no kernel sandbox outside Linux.
func Probe() Status { return Status{Reason: "no kernel sandbox on this system"} }

// wrapperMain runs the command unconfined; Command never wraps here, so
// this only serves a wrapper invocation made by hand.
func wrapperMain(args []string) int {
	_, argv, err := parseWrapperArgs(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mini-agent sandbox: %v\n", err)
		return 126
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		fmt.Fprintf(os.Stderr, "mini-agent sandbox: %v\n", err)
		return 127
	}
	return 0
}
