//go:build linux

package sandbox

import (
	"fmt"
	"os"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// minABI is the oldest Landlock ABI used: ABI 1 refuses every rename or
// link across directories, which breaks build tools.
const minABI = 2

// Landlock signal scoping had a bug fixed by erratum 2 (backported to
// 6.12 LTS); go-landlock does not scope without the fix.
const erratumSignalScope = 0x2

// handledFS is every filesystem right the sandbox restricts. Device ioctls
// and connecting to pathname unix sockets stay as they are: tests use
// both, and neither writes a file. (The sockets test code must not reach
// are kept from it by its identity, or hidden: see isolation.)
var handledFS = landlock.V11.HandledAccessFS &^ (ll.AccessFSIoctlDev | ll.AccessFSResolveUnix)

// devFiles are writable in every sandbox: programs write to them routinely.
var devFiles = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/random", "/dev/urandom"}

// devDirs are writable in every sandbox (shared memory, pseudo-terminals).
var devDirs = []string{"/dev/shm", "/dev/pts"}

// Probe reports the Landlock protections a sandboxed command gets on this
// kernel (Prepare adds the rest).
func Probe() Status {
	abi, err := ll.LandlockGetABIVersion()
	if err != nil || abi <= 0 {
		reason := "the kernel does not offer Landlock"
		if err != nil {
			reason += " (" + err.Error() + ")"
		}
		return Status{Reason: reason}
	}
	if abi < minABI {
		return Status{ABI: abi, Reason: fmt.Sprintf("Landlock ABI %d is older than %d", abi, minABI)}
	}
	// As root with capabilities, the command still read other processes'
	// environ on a 6.18 kernel with Landlock ABI 7 (measured); without
	// them it did not. Prepare corrects the claim for what the command
	// keeps.
	st := Status{ABI: abi, Writes: true, Ptrace: os.Geteuid() != 0}
	if abi >= 6 {
		errata, err := ll.LandlockGetErrata()
		if err == nil && errata&erratumSignalScope != 0 {
			st.Signals, st.AbstractUnix = true, true
		}
	}
	return st
}

// rules builds the Landlock rules: read and execute everywhere, write to
// the writable paths and the usual device files.
func rules(writable []string) []landlock.Rule {
	out := []landlock.Rule{landlock.RODirs("/")}
	var dirs, files []string
	for _, w := range writable {
		fi, err := os.Stat(w)
		switch {
		case err != nil:
			continue // missing: nothing to allow
		case fi.IsDir():
			dirs = append(dirs, w)
		default:
			files = append(files, w)
		}
	}
	dirs = append(dirs, devDirs...)
	files = append(files, devFiles...)
	out = append(out, landlock.RWDirs(dirs...).WithRefer().IgnoreIfMissing())
	out = append(out, landlock.RWFiles(files...).IgnoreIfMissing())
	return out
}
