package b

import (
	"fmt"
	"testing"
)

func TestDelta(t *testing.T) { fmt.Println("DELTA RAN") }
