//go:build !linux

package snapshot

import "errors"

// gateSupported: the stat gate is built for Linux only; elsewhere Restore
// always takes the full way.
const gateSupported = false

func lstatKey(top, rel string) (statKey, error) { return statKey{}, errors.New("not supported") }
