// Command mini-agent turns a failing test run into a validated fix: as a
// local CLI, and as the entry point of the GitHub Action.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/org/mini-agent/internal/gitexec"
	"github.com/org/mini-agent/internal/sandbox"
)

func main() {
	// First: in its hidden wrapper mode the binary confines itself and
	// execs the test command (see internal/sandbox); nothing else runs.
	sandbox.Main()
	hardenProcess()
	// git is resolved to an absolute path once, now, before any code under
	// test can plant another on PATH; a missing git is reported where used.
	_ = gitexec.Init()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The first signal cancels the run cleanly (test process groups killed,
	// reports written); a second one gets the default behaviour: exit now.
	go func() {
		<-ctx.Done()
		stop()
	}()
	code := Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	sandbox.Cleanup() // the build cache of test runs made as nobody
	os.Exit(code)
}
