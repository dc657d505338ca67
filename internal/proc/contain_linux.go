//go:build linux

package proc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Containment on Linux. Every Run leader starts a new session, and the
// process is a child subreaper: whatever a run leaves behind (a daemon
// that called setsid, a grandchild whose parent exited) is re-parented to
// this process instead of init, so it can be found and killed.
//
// Two mechanisms find a run's processes at its end:
//   - a cgroup v2 child group the leader is cloned into (CLONE_INTO_CGROUP,
//     so nothing runs before it is inside): exact; killed with cgroup.kill
//     after a freeze, so nothing forks out of the snapshot;
//   - otherwise a /proc scan: orphans re-parented to this process that are
//     in the run's session, or in a session of their own started during the
//     run (see claims), and all their descendants.
//
// Zombies are reaped by pid, one at a time, only for processes known to
// belong to the run: exec.Cmd.Wait of the process's other children keeps
// working.

const (
	mechCgroup    = "cgroup v2 (cgroup.kill) + child subreaper"
	mechSubreaper = "child subreaper + /proc scan"
	mechSession   = "session kill only (no subreaper)"
	sweepDeadline = 3 * time.Second
)

var (
	subreaperOnce sync.Once
	subreaperOK   bool

	cgroupSeq atomic.Int64

	activeMu sync.Mutex
	active   = map[*runRecord]bool{}

	// startMu keeps a sweep from reading the process table while a run's
	// leader exists but is not registered yet: that leader is a child in a
	// session of its own started during the sweeping run, which claims
	// would otherwise take for that run's daemon and kill (runs in
	// parallel, as the eval's, lost their test command that way).
	startMu sync.Mutex
)

// beginStart and endStart bracket a leader's start and registration.
func beginStart() { startMu.Lock() }
func endStart()   { startMu.Unlock() }

// EnableSubreaper makes this process a child subreaper (once; later calls
// report the first result). Run calls it; a program calls it at start-up
// so the protection holds before any child exists.
func EnableSubreaper() bool {
	subreaperOnce.Do(func() {
		const prSetChildSubreaper = 36
		_, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
		subreaperOK = errno == 0
	})
	return subreaperOK
}

// runRecord is one run in flight, for the orphan sweep.
type runRecord struct {
	leader int    // leader pid = the run's session id
	start  uint64 // leader's start time (clock ticks since boot)
	cg     *cgroup
}

// setRunAttrs puts the leader in a new session (so no run process can join
// this process's session or process group) and, when one can be created,
// in a fresh cgroup. The returned record must be finished with endRun.
func setRunAttrs(cmd *exec.Cmd, noCgroup bool) *runRecord {
	EnableSubreaper()
	attr := &syscall.SysProcAttr{Setsid: true}
	rec := &runRecord{}
	if !noCgroup {
		if cg, err := newCgroup(); err == nil {
			rec.cg = cg
			attr.UseCgroupFD = true
			attr.CgroupFD = cg.fd
		}
	}
	cmd.SysProcAttr = attr
	return rec
}

// startFailed undoes setRunAttrs when Start fails; it reports whether a
// retry without the cgroup is worth trying.
func (r *runRecord) startFailed(cmd *exec.Cmd) bool {
	if r.cg == nil {
		return false
	}
	r.cg.remove()
	r.cg = nil
	cmd.SysProcAttr.UseCgroupFD = false
	cmd.SysProcAttr.CgroupFD = 0
	return true
}

// started registers the run once its leader exists.
func (r *runRecord) started(pid int) {
	r.leader = pid
	if st, ok := readStat(pid); ok {
		r.start = st.start
	}
	activeMu.Lock()
	active[r] = true
	activeMu.Unlock()
}

// mechanism names what will contain the run.
func (r *runRecord) mechanism() string {
	switch {
	case r.cg != nil:
		return mechCgroup
	case subreaperOK:
		return mechSubreaper
	}
	return mechSession
}

// endRun kills and reaps every remaining process of the run. The leader
// has been waited for. It returns how many processes it killed.
func (r *runRecord) endRun() int {
	defer func() {
		activeMu.Lock()
		delete(active, r)
		activeMu.Unlock()
	}()
	killed := 0
	known := map[int]uint64{}
	if r.cg != nil {
		for pid, start := range r.cg.killAll() {
			known[pid] = start
			killed++
		}
		r.cg.remove()
	}
	return killed + r.sweep(known)
}

// sweep kills the run's orphans and their descendants until none is left,
// reaping the ones that are this process's children. known holds pids (with
// start times) already established as the run's.
func (r *runRecord) sweep(known map[int]uint64) int {
	self := os.Getpid()
	selfSid := 0
	if st, ok := readStat(self); ok {
		selfSid = st.sid
	}
	killed := map[int]bool{}
	deadline := time.Now().Add(sweepDeadline)
	for {
		startMu.Lock()
		procs := scanProcs()
		byParent := map[int][]int{}
		for pid, st := range procs {
			byParent[st.ppid] = append(byParent[st.ppid], pid)
		}
		var roots []int
		for _, pid := range byParent[self] {
			st := procs[pid]
			if start, ok := known[pid]; ok && start == st.start {
				roots = append(roots, pid)
				continue
			}
			if st.sid != selfSid && r.claims(pid, st) {
				roots = append(roots, pid)
			}
		}
		startMu.Unlock()
		pending := false
		stack := append([]int(nil), roots...)
		for len(stack) > 0 {
			pid := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			stack = append(stack, byParent[pid]...)
			if procs[pid].state != 'Z' {
				syscall.Kill(pid, syscall.SIGKILL)
				killed[pid] = true
				pending = true
			}
		}
		for _, pid := range roots {
			if procs[pid].state == 'Z' {
				var ws syscall.WaitStatus
				syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
			} else {
				pending = true
			}
		}
		if !pending || time.Now().After(deadline) {
			return len(killed)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// claims decides whether an orphan outside this process's session belongs
// to run r: it is in r's session, or it started its own session during r
// and no other run in flight started before it (that run will claim it
// when it ends). Leaders of runs in flight are never claimed.
func (r *runRecord) claims(pid int, st procStat) bool {
	activeMu.Lock()
	defer activeMu.Unlock()
	for o := range active {
		if o.leader == pid {
			return false
		}
		if o != r && st.sid == o.leader {
			return false
		}
	}
	if st.sid == r.leader {
		return true
	}
	if st.start < r.start {
		return false
	}
	for o := range active {
		if o != r && o.start <= st.start {
			return false
		}
	}
	return true
}

type procStat struct {
	ppid, sid int
	state     byte
	start     uint64
}

// readStat parses /proc/<pid>/stat: "pid (comm) state ppid pgrp session ...
// starttime(22)". comm may hold spaces and parentheses.
func readStat(pid int) (procStat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return procStat{}, false
	}
	f := strings.Fields(string(b[i+2:]))
	// f[0] is field 3 (state); starttime is field 22.
	if len(f) < 20 {
		return procStat{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	sid, err2 := strconv.Atoi(f[3])
	start, err3 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || len(f[0]) != 1 {
		return procStat{}, false
	}
	return procStat{ppid: ppid, sid: sid, state: f[0][0], start: start}, true
}

func scanProcs() map[int]procStat {
	out := map[int]procStat{}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		if st, ok := readStat(pid); ok {
			out[pid] = st
		}
	}
	return out
}

// cgroup is a cgroup v2 group made for one run.
type cgroup struct {
	dir string
	fd  int
}

// newCgroup creates a child of this process's own cgroup v2 group. It
// fails where cgroup v2 is not mounted or the group is not writable (an
// unprivileged user under systemd, most containers).
func newCgroup() (*cgroup, error) {
	mnt := cgroup2Mount()
	if mnt == "" {
		return nil, errors.New("no cgroup2 mount")
	}
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	var own string
	for line := range strings.SplitSeq(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			own = p
		}
	}
	if own == "" || strings.Contains(own, "..") {
		return nil, errors.New("no cgroup v2 membership")
	}
	dir := filepath.Join(mnt, own, fmt.Sprintf("mini-agent-%d-%d", os.Getpid(), cgroupSeq.Add(1)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	// The group must offer cgroup.kill (Linux 5.14) and freezing.
	for _, f := range []string{"cgroup.kill", "cgroup.freeze"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			os.Remove(dir)
			return nil, err
		}
	}
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		os.Remove(dir)
		return nil, err
	}
	return &cgroup{dir: dir, fd: fd}, nil
}

func cgroup2Mount() string {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		// id parent maj:min root mountpoint opts [optional...] - fstype source superopts
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		if f := strings.Fields(post); len(f) > 0 && f[0] == "cgroup2" {
			if pf := strings.Fields(pre); len(pf) >= 5 {
				return pf[4]
			}
		}
	}
	return ""
}

// killAll freezes the group, notes its members (pid and start time), kills
// them all and waits until the group is empty.
func (c *cgroup) killAll() map[int]uint64 {
	members := map[int]uint64{}
	if os.WriteFile(filepath.Join(c.dir, "cgroup.freeze"), []byte("1"), 0) == nil {
		deadline := time.Now().Add(time.Second)
		for time.Now().Before(deadline) {
			if ev, _ := os.ReadFile(filepath.Join(c.dir, "cgroup.events")); bytes.Contains(ev, []byte("frozen 1")) {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	for _, pid := range c.pids() {
		if st, ok := readStat(pid); ok {
			members[pid] = st.start
		}
	}
	os.WriteFile(filepath.Join(c.dir, "cgroup.kill"), []byte("1"), 0)
	deadline := time.Now().Add(sweepDeadline)
	for time.Now().Before(deadline) && len(c.pids()) > 0 {
		time.Sleep(2 * time.Millisecond)
	}
	return members
}

func (c *cgroup) pids() []int {
	b, _ := os.ReadFile(filepath.Join(c.dir, "cgroup.procs"))
	var out []int
	for f := range strings.FieldsSeq(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

func (c *cgroup) remove() {
	if c.fd > 0 {
		syscall.Close(c.fd)
		c.fd = -1
	}
	// rmdir fails while a member lives; a killed group empties quickly.
	for range 50 {
		if err := os.Remove(c.dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
