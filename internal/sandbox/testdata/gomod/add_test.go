package fixture

import (
	"os"
	"path/filepath"
	"testing"
)

func TestAdd(t *testing.T) {
	if Add(2, 3) != 5 {
		t.Fatal("Add(2, 3) != 5")
	}
}

// TestTempDir writes where tests write: t.TempDir and the module itself.
func TestTempDir(t *testing.T) {
	if err := os.WriteFile(filepath.Join(t.TempDir(), "f"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("generated.out", []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
}
