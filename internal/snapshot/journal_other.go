//go:build !linux

package snapshot

import "context"

// journalSupported: the change journal is built on inotify; elsewhere
// there is no gate either, and Restore always takes the full way.
const journalSupported = false

type journal struct{}

// journalOwner is the Snapshot's part of the journal: nothing here.
type journalOwner struct{}

var _ = Snapshot{}.journalOwner

func (j *journal) close()  {}
func (j *journal) settle() {}
func (j *journal) check(ctx context.Context, s *Snapshot, g *gate) (same bool, files, dirs []string, ok bool) {
	return false, nil, nil, false
}
func (s *Snapshot) armAll(ctx context.Context, g *gate, record bool)              {}
func (s *Snapshot) armTouched(ctx context.Context, g *gate, files, dirs []string) {}
