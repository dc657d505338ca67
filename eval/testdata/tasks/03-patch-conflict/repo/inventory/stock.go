// Package inventory tracks stock levels and reservations.
package inventory

import "errors"

// Errors returned by reservations.
var (
	ErrInsufficient = errors.New("inventory: insufficient stock")
	ErrInvalid      = errors.New("inventory: invalid quantity")
)

// Stock tracks the units of one item.
type Stock struct {
	OnHand   int
	Reserved int
}

// Available is what can still be reserved.
func (s *Stock) Available() int {
	return s.OnHand - s.Reserved
}

// Reserve sets qty units aside, or fails without changing anything.
func (s *Stock) Reserve(qty int) error {
	if qty <= 0 {
		return ErrInvalid
	}
	if qty >= s.Available() {
		return ErrInsufficient
	}
	s.Reserved += qty
	return nil
}
