package failure

import (
	"fmt"
	"math/rand"
	"sort"
	"testing"
)

// TestOpenSetMatchesMap runs random operations on an openSet and on a
// plain map side by side, through the list and the map forms and back.
func TestOpenSetMatchesMap(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(1))
	var o openSet
	ref := map[string]*heldOut{}
	var free []*heldOut
	for step := 0; step < 200000; step++ {
		name := fmt.Sprintf("Test%d", rng.Intn(3*openFew))
		switch op := rng.Intn(10); {
		case op < 5:
			if _, ok := ref[name]; ok {
				break
			}
			var b *heldOut
			if n := len(free); n > 0 {
				b, free = free[n-1], free[:n-1]
			} else {
				b = &heldOut{}
			}
			b.key = append(b.key[:0], name...)
			o.put(b)
			ref[name] = b
		case op < 8:
			got, ok := o.del(name)
			want, wok := ref[name]
			if ok != wok || got != want {
				t.Fatalf("step %d: del(%s) = %p %v, want %p %v", step, name, got, ok, want, wok)
			}
			if ok {
				delete(ref, name)
				free = append(free, got)
			}
		case op < 9:
			got, ok := o.get(name)
			want, wok := ref[name]
			if ok != wok || got != want {
				t.Fatalf("step %d: get(%s) = %p %v, want %p %v", step, name, got, ok, want, wok)
			}
		default:
			if rng.Intn(4) != 0 {
				break
			}
			var got, want []string
			o.drain(func(b *heldOut) { got = append(got, b.name()); free = append(free, b) })
			for k := range ref {
				want = append(want, k)
			}
			clear(ref)
			sort.Strings(got)
			sort.Strings(want)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("step %d: drained %v, want %v", step, got, want)
			}
		}
		if o.len() != len(ref) {
			t.Fatalf("step %d: len %d, want %d", step, o.len(), len(ref))
		}
	}
}
