package inventory

import (
	"errors"
	"testing"
)

func TestReserveReleaseRoundTrip(t *testing.T) {
	s := &Stock{OnHand: 3}
	for i := 0; i < 3; i++ {
		if err := s.Reserve(1); err != nil {
			t.Fatalf("Reserve #%d: %v", i+1, err)
		}
	}
	if err := s.Reserve(1); !errors.Is(err, ErrInsufficient) {
		t.Fatalf("fourth Reserve = %v, want ErrInsufficient", err)
	}
	if err := s.Release(3); err != nil {
		t.Fatalf("Release(3): %v", err)
	}
	if err := s.Release(1); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Release(1) with nothing reserved = %v, want ErrInvalid", err)
	}
	if s.Available() != 3 {
		t.Fatalf("Available() = %d, want 3", s.Available())
	}
}
