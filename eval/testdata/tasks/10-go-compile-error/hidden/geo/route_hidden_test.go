package geo

import "testing"

func TestLengthEdges(t *testing.T) {
	if Length(nil) != 0 || Length([]Point{{1, 1}}) != 0 {
		t.Error("Length of fewer than two points must be 0")
	}
}
