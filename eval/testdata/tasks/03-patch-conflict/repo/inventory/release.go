package inventory

// Release returns qty reserved units to the stock, or fails without
// changing anything.
func (s *Stock) Release(qty int) error {
	if qty < 0 {
		return ErrInvalid
	}
	s.Reserved -= qty
	return nil
}
