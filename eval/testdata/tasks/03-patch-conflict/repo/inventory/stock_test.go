package inventory

import (
	"errors"
	"testing"
)

func TestReserveAllAvailable(t *testing.T) {
	s := &Stock{OnHand: 5}
	if err := s.Reserve(5); err != nil {
		t.Fatalf("Reserve(5) with 5 on hand: %v", err)
	}
	if s.Available() != 0 {
		t.Fatalf("Available() = %d, want 0", s.Available())
	}
}

func TestReserveTooMany(t *testing.T) {
	s := &Stock{OnHand: 2}
	if err := s.Reserve(3); !errors.Is(err, ErrInsufficient) {
		t.Fatalf("Reserve(3) with 2 on hand = %v, want ErrInsufficient", err)
	}
}

func TestReleaseMoreThanReserved(t *testing.T) {
	s := &Stock{OnHand: 5, Reserved: 1}
	if err := s.Release(2); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Release(2) with 1 reserved = %v, want ErrInvalid", err)
	}
	if s.Reserved != 1 {
		t.Fatalf("Reserved = %d after a refused release, want 1", s.Reserved)
	}
}
