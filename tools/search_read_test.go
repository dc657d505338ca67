package tools

import (
	"errors"
	"path/filepath"
	"runtime"
	"testing"
)

// TestDirOpener opens real, symlinked and .git directories both ways (the
// platform's one-call open and the portable checked one): both must accept
// and refuse the same ones.
func TestDirOpener(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	dir := filepath.Join(base, "ws")
	fxWrite(t, base, map[string]string{"outside/secret.txt": "secret\n"})
	fxWrite(t, dir, map[string]string{
		"d/x.txt": "x\n", "d/sub/y.txt": "y\n", ".git/config": "c\n", "e/.GIT/z": "z\n",
	})
	fxSymlink(t, dir, "d", "linkdir")            // inside, but a link
	fxSymlink(t, dir, "../outside", "outdir")    // leaves the workspace
	fxSymlink(t, dir, "../d/sub", "e/viaparent") // a link further down
	ws := fxWorkspace(t, dir)
	want := map[string]bool{
		".": true, "d": true, "d/sub": true,
		"linkdir": false, "linkdir/sub": false, "outdir": false, "e/viaparent": false,
		".git": false, "e/.GIT": false, "missing": false, "d/x.txt": false, "..": false, "../outside": false,
	}
	for _, fast := range []bool{true, false} {
		o := newDirOpener(ws.Root())
		if !fast {
			o.noFast.Store(true)
		} else if runtime.GOOS == "linux" {
			if o.fast == nil {
				t.Fatal("no openat2 opener on Linux")
			}
			if _, err := o.fast.open("."); errors.Is(err, errUnsupported) {
				t.Logf("openat2 unsupported by this kernel or sandbox: only the portable way is checked")
				continue
			}
		}
		for d, ok := range want {
			r, err := o.open(d)
			if (err == nil) != ok {
				t.Errorf("fast=%v: open(%q): err %v, want ok=%v", fast, d, err, ok)
			}
			if err == nil {
				if d == "d" {
					if data, st := r.read("x.txt", nil); st != fileOK || string(data) != "x\n" {
						t.Errorf("fast=%v: d/x.txt read %q status %d", fast, data, st)
					}
				}
				r.close()
			}
		}
		if fast && o.noFast.Load() {
			t.Error("the fast opener fell back to the portable one")
		}
		o.close()
	}
}
