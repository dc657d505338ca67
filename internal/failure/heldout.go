package failure

// heldOut is the held -v output of one test without a verdict yet, with
// its test name (reused with the buffer, so that a test costs no
// allocation).
type heldOut struct {
	lines
	key []byte
}

func (b *heldOut) name() string { return view(b.key) }

// openFew is how many held outputs openSet searches in a list; more go in
// a map.
const openFew = 8

// openSet is the held output of the tests without a verdict yet, by test
// name: a short list while it is small (most logs have a few tests running
// at once; a list costs no hashing), a map beyond openFew. A buffer's name
// must not change while it is in the set.
type openSet struct {
	few []*heldOut
	m   map[string]*heldOut // nil while the list is used
}

func (o *openSet) len() int {
	if o.m != nil {
		return len(o.m)
	}
	return len(o.few)
}

func (o *openSet) get(name string) (*heldOut, bool) {
	if o.m != nil {
		b, ok := o.m[name]
		return b, ok
	}
	for _, b := range o.few {
		if b.name() == name {
			return b, true
		}
	}
	return nil, false
}

// put adds b, whose name is not in the set.
func (o *openSet) put(b *heldOut) {
	if o.m == nil && len(o.few) < openFew {
		o.few = append(o.few, b)
		return
	}
	if o.m == nil {
		o.m = make(map[string]*heldOut, 2*openFew)
		for i, f := range o.few {
			o.m[f.name()] = f
			o.few[i] = nil
		}
		o.few = o.few[:0]
	}
	o.m[b.name()] = b
}

// del removes the output held under name and returns it.
func (o *openSet) del(name string) (*heldOut, bool) {
	if o.m != nil {
		b, ok := o.m[name]
		if ok {
			delete(o.m, name)
			if len(o.m) == 0 {
				o.m = nil
			}
		}
		return b, ok
	}
	for i, b := range o.few {
		if b.name() == name {
			last := len(o.few) - 1
			o.few[i] = o.few[last]
			o.few[last] = nil
			o.few = o.few[:last]
			return b, true
		}
	}
	return nil, false
}

// drain empties the set, passing each held output to fn.
func (o *openSet) drain(fn func(*heldOut)) {
	if o.m != nil {
		m := o.m
		o.m = nil
		for _, b := range m {
			fn(b)
		}
		return
	}
	few := o.few
	o.few = o.few[:0]
	for i, b := range few {
		few[i] = nil
		fn(b)
	}
}
