package main

import (
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

// version is set at link time by the release build, the install script's
// source build and the Dockerfile:
//
//	go build -ldflags "-X main.version=v1.2.3" ./cmd/mini-agent
//
// Empty means a `go install` or `go run` build: versionString falls back to
// the module's build information.
var version string

// readBuildInfo is debug.ReadBuildInfo (a variable for tests).
var readBuildInfo = debug.ReadBuildInfo

// versionString is the version this binary reports: the linked-in
// version, else the module version from the build information ("v1.2.3"
// for `go install ...@v1.2.3`, "(devel)" for a build in the checkout), with
// the VCS revision when the build recorded one.
func versionString() string {
	if version != "" {
		return version
	}
	bi, ok := readBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev string
	var dirty bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev != "" && !strings.Contains(v, rev[:min(12, len(rev))]) {
		v += " (" + rev[:min(12, len(rev))]
		if dirty {
			v += ", modified"
		}
		v += ")"
	}
	return v
}

var versionCommand = &command{
	name:  "version",
	usage: "version",
	about: "Prints the version of this mini-agent binary: the release tag it was built for (set at link time " +
		"with -ldflags \"-X main.version=vX.Y.Z\"), or, for a `go install` or `go run` build, the module " +
		"version from Go's build information (\"(devel)\" for a build from a checkout, with the commit). " +
		"`mini-agent --version` prints the same. Reports (job summary, PR body) name the same version in their footer.",
	examples: []string{
		"mini-agent version",
		"mini-agent --version",
	},
}

// runVersion is `mini-agent version` and `mini-agent --version`.
func runVersion(args []string, stdout, stderr io.Writer) int {
	fs := versionCommand.flagSet()
	if code, done := versionCommand.parse(fs, args, stdout, stderr); done {
		return code
	}
	if fs.NArg() > 0 {
		return versionCommand.usageError(stderr, fmt.Sprintf("takes no arguments, got %q", fs.Args()))
	}
	fmt.Fprintf(stdout, "mini-agent %s\n", versionString())
	return 0
}
