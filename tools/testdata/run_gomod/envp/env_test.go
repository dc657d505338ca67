package envp

import (
	"fmt"
	"os"
	"testing"
)

// TestPrintEnv dumps the environment the test process received.
func TestPrintEnv(t *testing.T) {
	for _, kv := range os.Environ() {
		fmt.Println("ENV:" + kv)
	}
	fmt.Println("ENV-DUMP-END")
}
