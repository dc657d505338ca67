package snapshot

import "context"

// The change journal: what makes a clean step's check cost nothing per
// file, and a changed step's check cost a stat per changed entry.
//
// The stat gate (gate.go) lstat()s every recorded entry on every step:
// ~41k system calls on a 28k-file tree, whatever the step did. On Linux,
// when the gate is recorded, an inotify instance is opened and a watch is
// added on every gate entry: every recorded file (and .gitignore) and
// every directory git would walk. The next Restore reads the queued
// events and compares (entryChanged, as the gate does) only the entries
// they name: the watched entry, and for a directory's event about one of
// its names, that child too. An entry with no event is as recorded.
//
// Why no event means unchanged: the kernel queues an inotify event in the
// system call that changes the inode (write, truncate, chmod, chown,
// utimes, link, unlink, rename, create), before the call returns, so once
// every process of the step has exited (Restore runs after it), each
// change it made is in the queue. The watches are on the inodes, not on
// names: a write through a hard link outside the work tree, or through a
// bind mount of it, or through an fd opened before the recording, is
// reported by the file's own watch (IN_MODIFY, IN_ATTRIB for its link
// count and times); a write through a shared mapping sends no IN_MODIFY,
// but the file it maps was opened for writing, and the last reference to
// that open file (the mapping holds one) goes at munmap or exit, after the
// last write: IN_CLOSE_WRITE, in the mask for this. A name swapped, created or removed in a watched
// directory is reported by the directory's watch with the name, and an
// inode deleted by IN_DELETE_SELF and IN_IGNORED (its entry is then
// "lost": compared, and watched again after the restore, or the journal
// refuses). Events do not depend on timestamps, so an entry with no event
// needs no racy comparison; a dirty entry is compared by entryChanged,
// racy byte compare included.
//
// Arming: a watch is added by path (inotify_add_watch, IN_DONT_FOLLOW,
// opening nothing), then the entry is lstat()ed and must give the key the
// gate recorded: a watch then stands for the recorded state, and any
// change after it is an event. A racy entry (gate.go) is "pending": the
// first check after its arming compares it by content anyway, so that a
// change between the gate's stat and the watch, in the same clock tick,
// cannot hide. After a changed step, Restore's own writes are drained and
// discarded (settle) after the writes and before the second write-tree
// and refresh's stats: a later change is an event the next check sees
// (its entry is then racy, and compared by content, if refresh stat'ed it
// after the change). Refresh's entries and those settle saw are watched
// again (a rewritten file is a new inode); everything is armed again only
// when the gate is recorded whole.
//
// Refusing: the journal goes unhealthy, and the step takes the full stat
// pass (then arms again when the tree is as recorded), on any failure to
// add a watch (ENOSPC past fs.inotify.max_user_watches; no instance past
// max_user_instances), an lstat after arming that does not give the
// recorded key, a queue overflow (IN_Q_OVERFLOW: fs.inotify.max_queued_events,
// a step touching more than ~16k entries), an unmount, a read error, an
// event for a watch it does not know, an entry left without a watch.
//
// Not covered, as with the gate: a change made while Restore itself runs
// by a process outside the step (the harness's premise: the step's
// processes are gone, and nothing else writes the workspace); a same-tick
// swap of an entry's inode between inotify_add_watch and its lstat by
// such a process; writes that bypass the VFS (a raw block device, a
// filesystem changed from another host, e.g. NFS or a FUSE server whose
// kernel sends no events; CAP_SYS_ADMIN tricks such as a mount over a
// work tree directory are seen only as the mount point's entries, which
// the full check would equally miss once the times match). Watches pin
// the inodes in memory (about a kilobyte of kernel memory each) and count
// against the user's max_user_watches for as long as the Snapshot lives.

// checkGate is the gate's check for Restore: from the journal when it can
// vouch, the full stat pass otherwise (and then the journal is armed
// again, if the tree is as recorded).
func (s *Snapshot) checkGate(ctx context.Context, g *gate) (same bool, files, dirs []string) {
	if same, files, dirs, ok := s.journal.check(ctx, s, g); ok {
		s.journalChecks++
		return same, files, dirs
	}
	s.statPasses++
	same, files, dirs = g.check(ctx, s)
	if same && journalSupported {
		s.armAll(ctx, g, false)
	}
	return same, files, dirs
}
