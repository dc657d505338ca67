package fixture

import "testing"

func TestPass(t *testing.T) {}

func TestSkip(t *testing.T) { t.Skip("skipped on purpose") }

func TestTable(t *testing.T) {
	for _, name := range []string{"one", "two"} {
		t.Run(name, func(t *testing.T) {})
	}
}
