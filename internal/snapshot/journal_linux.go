//go:build linux

package snapshot

import (
	"context"
	"path"
	"path/filepath"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The journal's Linux side: one inotify instance per Snapshot, a watch on
// every gate entry (see journal.go for why that is sound).

// watchMask is what a watch reports: every change to an inode's content,
// metadata, links or name, and for a directory every entry created,
// removed or moved. IN_DONT_FOLLOW watches a symlink itself, as lstat
// sees it. Opens and reads (IN_OPEN, IN_ACCESS, IN_CLOSE_NOWRITE) are
// left out: they change nothing.
const watchMask = unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE |
	unix.IN_CREATE | unix.IN_DELETE | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_DONT_FOLLOW

// journalSupported: inotify is there.
const journalSupported = true

// journalOwner is the Snapshot's part: what outlives one journal.
type journalOwner struct {
	arms int // journals armed whole (a watch per entry)
	// journalLimited: the kernel refused a watch or the instance
	// (max_user_watches, max_user_instances, an unreadable entry); only
	// recording the gate whole tries again.
	journalLimited bool
	testBeforeArm  func() // tests: runs before armTouched renews watches
	// testIgnoreMounts (tests): the mount table is not watched. Other
	// tests' processes mount in this namespace (ip netns add), which makes
	// a journal refuse once: right, but not what a test of the journal's
	// answers is about (TestJournalRefusesAfterAMount keeps it off).
	testIgnoreMounts bool
}

// jref names a gate entry.
type jref struct {
	path string
	dir  bool
}

// journal is the inotify instance and what its watches stand for. Its
// zero value (and nil) is unhealthy: Restore takes the full stat pass.
type journal struct {
	mu           sync.Mutex // watch runs on the gate's workers
	fd           int
	mounts       int  // /proc/self/mountinfo, polled for mount table changes
	ignoreMounts bool // tests only (journalOwner.testIgnoreMounts)
	healthy      bool
	why          string           // the first reason it went unhealthy (tests, debugging)
	limited      bool             // the kernel refused a watch: retrying will not help
	byWD         map[int32][]jref // the entries each watch stands for (hard links share one)
	wdOf         map[jref]int32   // each entry's watch
	removed      map[int32]bool   // watches we removed: their IN_IGNORED is expected
	dirty        map[jref]bool    // entries an event named since the last check
	lost         map[jref]bool    // entries whose watched inode is gone (IN_IGNORED)
	pending      map[jref]bool    // racy entries armed since their last comparison
	settled      map[jref]bool    // entries Restore's own writes touched (settle)
	buf          [64 << 10]byte   // one read of events
	testOverflow func() bool      // test hook: report a queue overflow on the next drain
}

// openJournal starts an empty, healthy journal; nil when inotify cannot
// be had (EMFILE: too many instances), which is unhealthy.
func openJournal() *journal {
	// The mount table first: a mount placed over a directory of the tree
	// sends no inotify event, but marks /proc/self/mountinfo (poll reports
	// POLLPRI for any mount or unmount in this mount namespace since the
	// file was opened). Without it the journal cannot vouch.
	mounts, err := unix.Open("/proc/self/mountinfo", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		unix.Close(mounts)
		return nil
	}
	return &journal{
		fd: fd, mounts: mounts, healthy: true,
		byWD: map[int32][]jref{}, wdOf: map[jref]int32{}, removed: map[int32]bool{},
		dirty: map[jref]bool{}, lost: map[jref]bool{}, pending: map[jref]bool{}, settled: map[jref]bool{},
	}
}

// close releases the instance and with it every watch.
func (j *journal) close() {
	if j != nil && j.fd >= 0 {
		unix.Close(j.fd)
		unix.Close(j.mounts)
		j.fd, j.mounts = -1, -1
		j.healthy = false
	}
}

func (j *journal) ok() bool { return j != nil && j.healthy }

// isHealthy is ok for the gate's workers while they arm.
func (j *journal) isHealthy() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.healthy
}

// fail marks the journal unhealthy: until re-armed, every check is the
// full stat pass.
func (j *journal) fail(why string) {
	if j.healthy {
		j.healthy, j.why = false, why
	}
}

// watch adds (or renews) the watch on entry e of the gate at top, then
// lstat()s it: the watch must stand for the state the gate recorded, so
// the lstat after adding it must give the recorded key, or the journal
// cannot vouch for the entry (it goes unhealthy). Safe for concurrent use.
func (j *journal) watch(top string, e *gateEntry, dir bool) {
	mask := uint32(watchMask)
	if dir {
		mask |= unix.IN_ONLYDIR
	}
	p := filepath.Join(top, filepath.FromSlash(e.path))
	var wd int
	var err error
	for {
		wd, err = unix.InotifyAddWatch(j.fd, p, mask)
		if err != unix.EINTR {
			break
		}
	}
	k, kerr := lstatKey(top, e.path)
	j.mu.Lock()
	defer j.mu.Unlock()
	if err != nil {
		// ENOSPC: max_user_watches reached; ENOMEM; EACCES: an entry
		// not readable. None goes away by trying again next step.
		j.limited = true
		j.fail("inotify_add_watch " + e.path + ": " + err.Error())
		return
	}
	if kerr != nil || k != e.key {
		j.fail("changed while armed: " + e.path)
		return
	}
	r := jref{e.path, dir}
	w := int32(wd)
	if old, had := j.wdOf[r]; had && old != w {
		j.unbind(r, old)
	}
	if _, had := j.wdOf[r]; !had {
		j.wdOf[r] = w
		j.byWD[w] = append(j.byWD[w], r)
	}
	delete(j.lost, r)
	if e.racy {
		j.pending[r] = true
	}
}

// unbind drops r from watch wd, and the watch when nothing else uses it
// (the old inode of a file Restore replaced, still linked elsewhere).
func (j *journal) unbind(r jref, wd int32) {
	refs := j.byWD[wd]
	for i, x := range refs {
		if x == r {
			refs = append(refs[:i], refs[i+1:]...)
			break
		}
	}
	delete(j.wdOf, r)
	if len(refs) > 0 {
		j.byWD[wd] = refs
		return
	}
	delete(j.byWD, wd)
	j.removed[wd] = true
	unix.InotifyRmWatch(j.fd, uint32(wd))
}

// drain reads every queued event (the descriptor is non-blocking) and
// marks the entries they name dirty: the watched entry, and for an event
// on a directory about one of its entries, that child too.
func (j *journal) drain() {
	if !j.ok() {
		return
	}
	if j.testOverflow != nil && j.testOverflow() {
		j.fail("queue overflow")
		return
	}
	if !j.ignoreMounts && j.mountsChanged() {
		j.fail("the mount table changed")
		return
	}
	for {
		n, err := unix.Read(j.fd, j.buf[:])
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return
		case err != nil:
			j.fail("read: " + err.Error())
			return
		case n <= 0:
			j.fail("short read")
			return
		}
		j.parse(j.buf[:n])
		if !j.healthy {
			return
		}
	}
}

// parse handles one read's worth of events.
func (j *journal) parse(b []byte) {
	const head = unix.SizeofInotifyEvent
	for len(b) >= head {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&b[0]))
		end := head + int(ev.Len)
		if end > len(b) {
			j.fail("truncated event")
			return
		}
		name := string(b[head:end])
		for len(name) > 0 && name[len(name)-1] == 0 {
			name = name[:len(name)-1]
		}
		b = b[end:]
		switch {
		case ev.Mask&unix.IN_Q_OVERFLOW != 0:
			j.fail("queue overflow")
			return
		case ev.Mask&unix.IN_UNMOUNT != 0:
			j.fail("filesystem unmounted")
			return
		}
		refs, known := j.byWD[ev.Wd]
		if !known {
			if j.removed[ev.Wd] {
				if ev.Mask&unix.IN_IGNORED != 0 {
					delete(j.removed, ev.Wd)
				}
				continue // queued before we removed it: about an inode no entry has
			}
			j.fail("event for an unknown watch")
			return
		}
		for _, r := range refs {
			j.dirty[r] = true
			if r.dir && name != "" {
				child := path.Join(r.path, name)
				j.dirty[jref{child, false}] = true
				j.dirty[jref{child, true}] = true
			}
		}
		if ev.Mask&unix.IN_IGNORED != 0 { // the inode is gone: no watch stands for these entries
			for _, r := range refs {
				j.lost[r] = true
				delete(j.wdOf, r)
			}
			delete(j.byWD, ev.Wd)
		}
	}
	if len(b) != 0 {
		j.fail("truncated event")
	}
}

// armAll starts a new journal for gate g: a watch on every entry. On any
// failure the journal is unhealthy and the next check is the full pass.
// After the kernel refused a watch or the instance, only a whole
// recording of the gate (record true) tries again: retrying on every step
// would add a failed arming to every full pass.
func (s *Snapshot) armAll(ctx context.Context, g *gate, record bool) {
	s.journal.close()
	s.journal = nil
	if g == nil || (s.journalLimited && !record) {
		return
	}
	s.arms++
	j := openJournal()
	if j == nil { // EMFILE: max_user_instances, or the process's descriptors
		s.journalLimited = true
		return
	}
	defer func() { s.journalLimited = j.limited }()
	if !localFilesystems(s.dir, g) {
		j.limited = true
		j.fail("the tree is not (all) on a local filesystem")
		return
	}
	j.ignoreMounts = s.testIgnoreMounts
	s.journal = j
	if err := g.each(ctx, func(e *gateEntry, dir bool) error {
		j.watch(s.dir, e, dir)
		if !j.isHealthy() {
			return errGateOff // stop early: the journal cannot vouch anyway
		}
		return nil
	}); err != nil {
		j.fail("arming: " + err.Error())
	}
}

// mountsChanged reports whether anything was mounted or unmounted in this
// mount namespace since the journal was opened (or poll failed).
func (j *journal) mountsChanged() bool {
	fds := []unix.PollFd{{Fd: int32(j.mounts), Events: unix.POLLPRI}}
	for {
		_, err := unix.Poll(fds, 0)
		if err == unix.EINTR {
			continue
		}
		return err != nil || fds[0].Revents&(unix.POLLERR|unix.POLLPRI|unix.POLLNVAL) != 0
	}
}

// localFS are the filesystems whose every change goes through this
// kernel's VFS, where inotify sees it. On a network or FUSE filesystem
// (NFS, SMB, 9p, virtiofs, sshfs), another host or a server process can
// change a file with no event here, while lstat would still see it.
var localFS = map[int64]bool{
	unix.EXT4_SUPER_MAGIC:      true, // ext2, ext3, ext4
	unix.XFS_SUPER_MAGIC:       true,
	unix.BTRFS_SUPER_MAGIC:     true,
	unix.TMPFS_MAGIC:           true,
	unix.OVERLAYFS_SUPER_MAGIC: true, // changes made through the overlay
	unix.F2FS_SUPER_MAGIC:      true,
	0x2fc12fc1:                 true, // zfs
}

// localFilesystems reports whether every filesystem the gate's entries
// lie on is a local one: one statfs per distinct device.
func localFilesystems(top string, g *gate) bool {
	seen := map[uint64]bool{}
	for _, list := range [][]gateEntry{g.dirs, g.files} {
		for _, e := range list {
			if seen[e.key.dev] || e.key.mode&unix.S_IFMT == unix.S_IFLNK {
				continue // statfs would follow a link: its directory tells
			}
			seen[e.key.dev] = true
			var st unix.Statfs_t
			if err := unix.Statfs(filepath.Join(top, filepath.FromSlash(e.path)), &st); err != nil || !localFS[int64(st.Type)] {
				return false
			}
		}
	}
	return true
}
