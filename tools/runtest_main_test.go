package tools

import (
	"os"
	"testing"

	"github.com/org/mini-agent/internal/sandbox"
	"github.com/org/mini-agent/internal/testcmd"
)

// TestMain makes the test binary its own sandbox launcher, as mini-agent's
// main does, so run_test's command runs confined in these tests too; and
// lets the binary serve as a hostile helper program (runtest_hostile_test.go).
func TestMain(m *testing.M) {
	sandbox.Main()
	if args, ok := hostileHelperArgs(); ok {
		os.Exit(hostileHelper(args))
	}
	code := m.Run()
	sandbox.Cleanup()
	os.Exit(code)
}

// mustParse parses a configured test command; "" is none (nil).
func mustParse(tb testing.TB, line string) *testcmd.Command {
	tb.Helper()
	if line == "" {
		return nil
	}
	c, err := testcmd.Parse(line)
	if err != nil {
		tb.Fatalf("testcmd.Parse(%q): %v", line, err)
	}
	return c
}
