//go:build linux

package proc

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// daemonScript starts a grandchild that leaves the run's session and
// process group (setsid in a forked child, so it is re-parented when its
// parent exits), records its pid, and then behaves as asked in $2.
const daemonScript = `setsid sh -c 'echo $$ > "$0.tmp"; mv "$0.tmp" "$0"; exec sleep 300' "$1" < /dev/null > /dev/null 2>&1 &
while [ ! -s "$1" ]; do sleep 0.01; done
echo started
case "$2" in
exit) exit 0 ;;
hang) sleep 300 ;;
esac`

// A grandchild daemon that called setsid is killed and reaped (no zombie
// left either) at every end of a run: normal exit, timeout, cancellation,
// with the cgroup and with the /proc fallback. Before containment it
// survived all of them.
//
// The fallback cannot tell apart the setsid daemons of two runs in flight
// (the older run claims them), so its tests run alone: not in parallel.
func TestRunKillsSetsidDaemon(t *testing.T) {
	t.Parallel()
	testKillsSetsidDaemon(t, "cgroup", true)
}

func TestRunKillsSetsidDaemonFallback(t *testing.T) {
	testKillsSetsidDaemon(t, "fallback", false)
}

func testKillsSetsidDaemon(t *testing.T, mech string, parallel bool) {
	{
		for _, end := range []string{"exit", "timeout", "cancel"} {
			t.Run(end, func(t *testing.T) {
				if parallel {
					t.Parallel()
				}
				pidfile := filepath.Join(t.TempDir(), "pid")
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				mode := "exit"
				if end != "exit" {
					mode = "hang"
				}
				spec := Spec{Argv: []string{"sh", "-c", daemonScript, "sh", pidfile, mode}, Env: baseEnv(),
					KillGrace: 200 * time.Millisecond, noCgroup: mech == "fallback"}
				switch end {
				case "timeout":
					spec.Timeout = 2 * time.Second
				case "cancel":
					go func() {
						waitForPid(t, pidfile)
						cancel()
					}()
				}
				res, err := Run(ctx, spec)
				switch end {
				case "exit":
					if err != nil || res.ExitCode != 0 {
						t.Fatalf("err %v, result %+v", err, res)
					}
				case "timeout":
					if err != nil || !res.TimedOut {
						t.Fatalf("err %v, result %+v", err, res)
					}
				case "cancel":
					if !errors.Is(err, context.Canceled) || !res.Cancelled {
						t.Fatalf("err %v, result %+v", err, res)
					}
				}
				pid := waitForPid(t, pidfile)
				t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
				// Gone at once when Run returns: killed and reaped, not a zombie.
				if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
					st, _ := readStat(pid)
					t.Fatalf("daemon %d outlived the run (state %c, parent %d); containment %q", pid, st.state, st.ppid, res.Containment)
				}
				if res.Leftovers < 1 {
					t.Errorf("Leftovers = %d, want the daemon counted", res.Leftovers)
				}
				want := mechSubreaper
				if mech == "cgroup" && cgroupUsable(t) {
					want = mechCgroup
				}
				if res.Containment != want {
					t.Errorf("Containment = %q, want %q", res.Containment, want)
				}
			})
		}
	}
}

// The daemon's own children, started before it was orphaned or after, die
// with it.
func TestRunKillsDaemonDescendants(t *testing.T) {
	dir := t.TempDir()
	script := `setsid sh -c 'sleep 300 & echo $! > "$0/child"; echo $$ > "$0/daemon"; wait' "$1" < /dev/null > /dev/null 2>&1 &
while [ ! -s "$1/child" ] || [ ! -s "$1/daemon" ]; do sleep 0.01; done`
	res, err := Run(t.Context(), Spec{Argv: []string{"sh", "-c", script, "sh", dir}, Env: baseEnv(), noCgroup: true})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("err %v, result %+v", err, res)
	}
	for _, f := range []string{"child", "daemon"} {
		pid := waitForPid(t, filepath.Join(dir, f))
		if alive(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("%s %d outlived the run", f, pid)
		}
	}
}

// Reaping is targeted: a child this process started itself, outside any
// run, keeps its exit status for its own Wait while runs sweep.
func TestRunSweepLeavesOtherChildrenAlone(t *testing.T) {
	other := exec.Command("sh", "-c", "sleep 1; exit 7")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		dir := t.TempDir()
		if _, err := Run(t.Context(), Spec{Argv: []string{"sh", "-c", daemonScript, "sh", filepath.Join(dir, "pid"), "exit"},
			Env: baseEnv(), noCgroup: true}); err != nil {
			t.Fatal(err)
		}
	}
	err := other.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Fatalf("the other child's Wait = %v, want exit status 7", err)
	}
}

// cgroupUsable reports whether this machine lets the process create a
// cgroup v2 group (root with a writable cgroup2 mount).
func cgroupUsable(t *testing.T) bool {
	cg, err := newCgroup()
	if err != nil {
		t.Logf("cgroup v2 not usable here: %v", err)
		return false
	}
	cg.remove()
	return true
}

func TestReadStat(t *testing.T) {
	st, ok := readStat(os.Getpid())
	if !ok || st.ppid != os.Getppid() || st.state == 'Z' || st.start == 0 {
		t.Fatalf("readStat(self) = %+v, %v", st, ok)
	}
	sid, _, _ := syscall.RawSyscall(syscall.SYS_GETSID, 0, 0, 0)
	if st.sid != int(sid) {
		t.Fatalf("sid %d, want %d", st.sid, sid)
	}
	if _, ok := readStat(-1); ok {
		t.Fatal("readStat(-1) succeeded")
	}
	if !strings.HasPrefix(cgroup2Mount(), "/") {
		t.Logf("no cgroup2 mount: %q", cgroup2Mount())
	}
}

// Runs in parallel never kill each other: a run's end-of-run sweep used to
// claim the leader of a run that had just started but was not registered
// yet (a child in a session of its own, started during the sweeping run)
// and kill it. Many short runs side by side with longer ones; every run
// must end by itself with exit 0.
func TestParallelRunsDoNotKillEachOther(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	for _, mech := range []string{"cgroup", "fallback"} {
		t.Run(mech, func(t *testing.T) {
			const workers, each = 6, 25
			errs := make(chan string, workers*each)
			done := make(chan struct{})
			for w := 0; w < workers; w++ {
				go func() {
					defer func() { done <- struct{}{} }()
					argv := []string{"true"}
					if w%2 == 1 {
						argv = []string{"sh", "-c", "sleep 0.02"}
					}
					for i := 0; i < each; i++ {
						res, err := Run(t.Context(), Spec{Argv: argv, Env: baseEnv(), noCgroup: mech == "fallback"})
						if err != nil || res.ExitCode != 0 || res.Signal != "" {
							errs <- argv[0] + ": exit " + strconv.Itoa(res.ExitCode) + " " + res.Signal + " " + errString(err)
						}
					}
				}()
			}
			for w := 0; w < workers; w++ {
				<-done
			}
			close(errs)
			n := 0
			for e := range errs {
				if n++; n <= 3 {
					t.Errorf("a run was killed by another's sweep: %s", e)
				}
			}
			if n > 0 {
				t.Errorf("%d of %d runs did not end by themselves", n, workers*each)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
