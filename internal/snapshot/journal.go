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
// bind mount of the file elsewhere, is reported by the file's own watch
// (IN_MODIFY; IN_ATTRIB for its link count and times), which a watch on
// its directory would not see. A write through a shared mapping sends no
// IN_MODIFY, but the file was opened for writing, and the last reference
// to that open file (the mapping holds one) goes at munmap or exit, after
// the last write: IN_CLOSE_WRITE, in the mask for this. A name created,
// removed or swapped in a watched directory is reported by the
// directory's watch, with the name; an inode deleted, by IN_DELETE_SELF
// and IN_IGNORED (its entry is then "lost": compared, and watched again
// after the restore, or the journal refuses). Events do not depend on
// timestamps, so an entry with no event needs no racy comparison; an entry
// with one is compared by entryChanged, racy byte compare included.
// Paths, not only inodes, decide what git sees, and some path changes send
// no event to the inodes behind them: a directory renamed away and
// replaced (its parent's watch names it, but the entries below, reached
// by path, are other inodes now, unwatched), so when a directory's path
// leads to another inode (or none) every recorded entry below it is
// compared; a directory above the tree renamed and replaced, so the top
// is compared on every check, and refused when it is another inode; a
// mount over a directory of the tree, so the journal polls
// /proc/self/mountinfo, which reports any mount or unmount in this mount
// namespace, and refuses after one.
//
// Arming: a watch is added by path (inotify_add_watch, IN_DONT_FOLLOW,
// opening nothing), then the entry is lstat()ed and must give the key the
// gate recorded: the watch then stands for the recorded state, and any
// change after it is an event. A racy entry (gate.go) is "pending": the
// first check after its arming compares it by content anyway, so that a
// change between the gate's stat and the watch, in the same clock tick,
// cannot hide. After a changed step, the events of Restore's own writes
// are drained (settle) right after the writes, before the second
// write-tree and refresh's stats, so a change made after the drain stays
// queued for the next check. The drained events are not trusted blindly:
// every entry they name is watched again after refresh and must then
// lstat to the gate's key (refresh's own entries were just stat'ed, and a
// change after that stat is either an lstat that no longer matches, or a
// same-tick change to an entry that is racy, hence pending). So a change
// by another writer in that window either fails the arming (the next step
// takes the full stat pass) or is compared at the next check. Everything
// is armed again only when the gate is recorded whole, or after a full
// stat pass.
//
// Refusing ("be right or refuse"): the journal goes unhealthy, and the
// step takes the full stat pass (then arms again if the tree is as
// recorded), on any failure to add a watch (ENOSPC past
// fs.inotify.max_user_watches, EACCES; and no instance past
// max_user_instances: after these it waits for the next whole recording),
// an lstat after arming that does not give the recorded key, a queue
// overflow (IN_Q_OVERFLOW, past fs.inotify.max_queued_events: a step
// changing more than ~16k entries), a mount table change, an unmount, a
// read error, an event for a watch it does not know, an entry left
// without a watch, and a tree not wholly on a local filesystem (ext4,
// xfs, btrfs, tmpfs, overlayfs, f2fs, zfs: on NFS, SMB, 9p, virtiofs or
// FUSE another host or a server process changes files with no event here).
//
// Not covered: an inode swapped out and back at an entry's path, within
// one clock tick, between inotify_add_watch and its lstat, by a process
// writing the workspace while Restore runs (the harness's premise is that
// the step's processes are gone; the stat gate alone would see a later
// change to the swapped-in inode); a process that outlives the step and
// writes through a shared mapping it holds (no event until it unmaps; the
// stat gate sees the mtime only at the first write fault after
// writeback); writes below the VFS (a raw block device), and I/O paths of
// old kernels that send no fsnotify event (the journal assumes a current
// kernel, where write, truncate, fallocate, copy_file_range, clone and
// io_uring writes all notify). Watches pin the watched inodes in memory
// (roughly a kilobyte of kernel memory each) and count against the
// user's max_user_watches while the Snapshot lives: ~41k for a 28k-file
// tree.

// checkGate is the gate's check for Restore: from the journal when it can
// vouch, the full stat pass otherwise (and then the journal is armed
// again, if the tree is as recorded). journaled says the journal answered:
// only then may Restore take the fast path (fastrestore.go).
func (s *Snapshot) checkGate(ctx context.Context, g *gate) (same bool, files, dirs []string, journaled bool) {
	if same, files, dirs, ok := s.journal.check(ctx, s, g); ok {
		s.journalChecks++
		return same, files, dirs, true
	}
	s.statPasses++
	same, files, dirs = g.check(ctx, s)
	if same && journalSupported {
		s.armAll(ctx, g, false)
	}
	return same, files, dirs, false
}
