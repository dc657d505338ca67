//go:build race

package provider

// raceEnabled: the race detector drops sync.Pool items at random, so the
// HTTP stack reallocates buffers it would reuse and allocation counts say
// nothing about the adapter; memory bounds are checked without -race.
const raceEnabled = true
