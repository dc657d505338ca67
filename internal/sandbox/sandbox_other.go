//go:build !linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

const noSandbox = "no kernel sandbox on this system"

// Probe reports that there is no kernel sandbox outside Linux.
func Probe() Status { return Status{Reason: noSandbox} }

// Prepare returns argv and env unchanged: no protection exists here, and
// Status says so.
func Prepare(p Policy, argv, env []string) Launch {
	st := Status{Reason: noSandbox, NetworkReason: noSandbox, IdentityReason: noSandbox}
	if len(p.Masks) > 0 {
		st.MaskReason = noSandbox
	}
	return Launch{Argv: argv, Env: env, Status: st}
}

// SetAttrs adds nothing outside Linux.
func (Launch) SetAttrs(*syscall.SysProcAttr) {}

// NobodyCannotRead lists nothing outside Linux: no run changes its user
// there.
func NobodyCannotRead([]string) []string { return nil }

// Cleanup has nothing to remove outside Linux.
func Cleanup() {}

// wrapperMain runs the command unconfined; Prepare never wraps here, so
// this only serves a wrapper invocation made by hand.
func wrapperMain(args []string) int {
	cfg, argv, err := parseWrapperArgs(args)
	if err != nil || cfg.Probe {
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
