package tools

import (
	"os"
	"testing"

	"github.com/org/mini-agent/internal/sandbox"
)

// TestMain makes the test binary its own sandbox launcher, as mini-agent's
// main does, so run_test's command runs confined in these tests too; and
// lets the binary serve as a hostile helper program (runtest_hostile_test.go).
func TestMain(m *testing.M) {
	sandbox.Main()
	if args, ok := hostileHelperArgs(); ok {
		os.Exit(hostileHelper(args))
	}
	os.Exit(m.Run())
}
