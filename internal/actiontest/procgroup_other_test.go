//go:build !unix

package actiontest

import "os/exec"

// killGroupOnCancel kills only cmd itself where process groups are not used.
func killGroupOnCancel(*exec.Cmd) {}
