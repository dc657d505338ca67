package config

import "testing"

func TestPortDefault(t *testing.T) {
	if p, err := Port(""); err != nil || p != DefaultPort {
		t.Fatalf("Port(\"\") = %d, %v", p, err)
	}
}

func TestPortOutOfRange(t *testing.T) {
	for _, s := range []string{"0", "65536", "-1", "http"} {
		if _, err := Port(s); err == nil {
			t.Errorf("Port(%q) succeeded, want an error", s)
		}
	}
}
