// Command mini-agent turns a failing test run into a validated fix: as a
// local CLI, and as the entry point of the GitHub Action.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	hardenProcess()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
