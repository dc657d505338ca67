//go:build unix

package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

const victimText = "GOFLAGS=-mod=mod\n" // what ~/.config/go/env might hold

// scene is an output directory (the workspace, say) and a victim file
// outside it.
type scene struct {
	dir, victim string
}

func newScene(t *testing.T) scene {
	t.Helper()
	s := scene{dir: t.TempDir(), victim: filepath.Join(t.TempDir(), "env")}
	if err := os.WriteFile(s.victim, []byte(victimText), 0o600); err != nil {
		t.Fatal(err)
	}
	return s
}

func (s scene) path(name string) string { return filepath.Join(s.dir, name) }

// intact fails the test if the victim changed.
func (s scene) intact(t *testing.T) {
	t.Helper()
	data, err := os.ReadFile(s.victim)
	if err != nil || string(data) != victimText {
		t.Fatalf("the file outside was written through the link: %q, %v", data, err)
	}
}

// entries lists the output directory: no temporary file may be left.
func (s scene) entries(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func wantRefused(t *testing.T, err error, path, what string) {
	t.Helper()
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("err = %v, want a refusal", err)
	}
	var re *RefusedError
	if !errors.As(err, &re) || re.Path != path || !strings.Contains(err.Error(), path+" "+what) {
		t.Fatalf("err = %q, want it to say %q", err, path+" "+what)
	}
}

// hostile plants what test code could at name: each returns what a refusal
// says.
var hostile = []struct {
	name  string
	plant func(t *testing.T, s scene, p string)
	says  string
}{
	{"symlink to a file outside", func(t *testing.T, s scene, p string) { symlink(t, s.victim, p) },
		"is a symbolic link: mini-agent does not write through links"},
	{"dangling symlink", func(t *testing.T, s scene, p string) { symlink(t, filepath.Join(filepath.Dir(s.victim), "new"), p) },
		"is a symbolic link: mini-agent does not write through links"},
	{"symlink to a directory", func(t *testing.T, s scene, p string) { symlink(t, filepath.Dir(s.victim), p) },
		"is a symbolic link"},
	{"named pipe", func(t *testing.T, s scene, p string) {
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}, "is a named pipe, not a regular file: mini-agent writes its outputs only to regular files"},
	{"directory", func(t *testing.T, s scene, p string) {
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}, "is a directory, not a regular file"},
}

func symlink(t *testing.T, target, p string) {
	t.Helper()
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

func TestWriteFileRefusesLinksAndSpecialFiles(t *testing.T) {
	t.Parallel()
	for _, h := range hostile {
		t.Run(h.name, func(t *testing.T) {
			t.Parallel()
			s := newScene(t)
			p := s.path("pr.md")
			h.plant(t, s, p)
			before, _ := os.Lstat(p)
			var checked, written error
			within(t, 5*time.Second, func() {
				checked, written = CheckTarget(p), WriteFile(p, []byte("the PR body\n"), 0o644)
			})
			wantRefused(t, checked, p, h.says)
			wantRefused(t, written, p, h.says)
			s.intact(t)
			if after, err := os.Lstat(p); err != nil || !os.SameFile(before, after) {
				t.Errorf("the planted entry was changed: %v", err)
			}
			if names := s.entries(t); !slices.Equal(names, []string{"pr.md"}) {
				t.Errorf("left in the directory: %v", names)
			}
			if ents, _ := os.ReadDir(filepath.Dir(s.victim)); len(ents) != 1 {
				t.Errorf("something was created next to the victim: %v", ents)
			}
		})
	}
}

func TestWriteFileCreatesAndReplaces(t *testing.T) {
	t.Parallel()
	s := newScene(t)
	p := s.path("bundle.json")
	// Absent: created with perm exactly (no umask).
	if err := WriteFile(p, []byte("one\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(p); err != nil || fi.Mode() != 0o666 {
		t.Fatalf("mode %v, %v; want -rw-rw-rw-", fi.Mode(), err)
	}
	// An existing regular file is replaced; so is one that is a hard link
	// to a file elsewhere, which keeps its content.
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(s.victim, p); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(p); string(data) != "two\n" {
		t.Fatalf("content %q", data)
	}
	s.intact(t)
	if fi, _ := os.Lstat(p); fi.Mode() != 0o644 {
		t.Errorf("mode %v", fi.Mode())
	}
	if names := s.entries(t); !slices.Equal(names, []string{"bundle.json"}) {
		t.Errorf("left in the directory: %v", names)
	}
	if err := CheckTarget(p); err != nil {
		t.Errorf("CheckTarget(regular file) = %v", err)
	}
	if err := CheckTarget(s.path("absent")); err != nil {
		t.Errorf("CheckTarget(absent) = %v", err)
	}
	if err := WriteFile(filepath.Join(s.dir, "no", "such"), nil, 0o644); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing directory: %v", err)
	}
}

// A link planted after the check (while the data is written) is replaced
// by the rename, never followed.
func TestWriteFileReplacesALinkPlantedAfterTheCheck(t *testing.T) {
	s := newScene(t)
	p := s.path("pr.md")
	beforeRename = func() { symlink(t, s.victim, p) }
	t.Cleanup(func() { beforeRename = nil })
	if err := WriteFile(p, []byte("the PR body\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.intact(t)
	if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("the link is still there: %v %v", fi.Mode(), err)
	}
	if data, _ := os.ReadFile(p); string(data) != "the PR body\n" {
		t.Errorf("content %q", data)
	}
	// A directory planted there instead is said, and the temporary file
	// removed.
	q := s.path("bundle.json")
	beforeRename = func() {
		if err := os.Mkdir(q, 0o755); err != nil {
			t.Error(err)
		}
		if err := os.WriteFile(filepath.Join(q, "x"), nil, 0o644); err != nil {
			t.Error(err)
		}
	}
	wantRefused(t, WriteFile(q, []byte("{}\n"), 0o644), q, "is a directory")
	if names := s.entries(t); !slices.Equal(names, []string{"bundle.json", "pr.md"}) {
		t.Errorf("left in the directory: %v", names)
	}
}

func TestCreateRefusesLinksAndSpecialFiles(t *testing.T) {
	t.Parallel()
	cases := append(slices.Clone(hostile), struct {
		name  string
		plant func(t *testing.T, s scene, p string)
		says  string
	}{"hard link to a file outside", func(t *testing.T, s scene, p string) {
		if err := os.Link(s.victim, p); err != nil {
			t.Fatal(err)
		}
	}, "is a file with 2 hard links: mini-agent does not write through links"})
	for _, h := range cases {
		t.Run(h.name, func(t *testing.T) {
			t.Parallel()
			s := newScene(t)
			p := s.path("trace.jsonl")
			h.plant(t, s, p)
			var err error
			within(t, 5*time.Second, func() {
				var f *File
				if f, err = Create(p, 0o644); err == nil {
					f.Write([]byte("an event\n"))
					f.Close()
				}
			})
			wantRefused(t, err, p, h.says)
			s.intact(t)
			if names := s.entries(t); !slices.Equal(names, []string{"trace.jsonl"}) {
				t.Errorf("left in the directory: %v", names)
			}
		})
	}
}

func TestCreateWritesInPlace(t *testing.T) {
	t.Parallel()
	s := newScene(t)
	p := s.path("trace.jsonl")
	if err := os.WriteFile(p, []byte("an old trace, longer than the new one\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Create(p, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("event 1\n"); err != nil {
		t.Fatal(err)
	}
	// Readable at its path while written.
	if data, _ := os.ReadFile(p); string(data) != "event 1\n" {
		t.Errorf("during the run: %q", data)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(p); fi.Mode() != 0o644 {
		t.Errorf("mode %v", fi.Mode())
	}
	// Absent: created.
	q := s.path("new.jsonl")
	if f, err = Create(q, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(q); err != nil || fi.Mode() != 0o666 || fi.Size() != 0 {
		t.Errorf("new file: %v %v", fi, err)
	}
}

// Test code replacing the trace with a symlink while it is written: no
// write goes through the link, and Close says what happened.
func TestCreateSurvivesASwapDuringTheRun(t *testing.T) {
	t.Parallel()
	for _, swap := range []string{"symlink", "removed"} {
		t.Run(swap, func(t *testing.T) {
			t.Parallel()
			s := newScene(t)
			p := s.path("trace.jsonl")
			f, err := Create(p, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString("event 1\n")
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if swap == "symlink" {
				symlink(t, s.victim, p)
			}
			if _, err := f.WriteString("event 2\n"); err != nil {
				t.Fatal(err)
			}
			err = f.Close()
			s.intact(t)
			want := "was removed while mini-agent wrote it"
			if swap == "symlink" {
				want = "was replaced while mini-agent wrote it (by a symbolic link)"
			}
			wantRefused(t, err, p, want)
		})
	}
}

// Append adds to a log mini-agent wrote, with Create's guards: a link
// swapped in for the log since is refused, and the file outside unchanged.
func TestAppendRefusesALinkSwappedInForTheLog(t *testing.T) {
	t.Parallel()
	s := newScene(t)
	p := s.path("3.log")
	if err := os.WriteFile(p, []byte("output\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Append(p)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("tail\n")
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(p); string(data) != "output\ntail\n" {
		t.Errorf("appended: %q", data)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	symlink(t, s.victim, p)
	_, err = Append(p)
	wantRefused(t, err, p, "is a symbolic link")
	s.intact(t)
	if _, err := Append(s.path("absent.log")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Append(absent) = %v, want not-exist (it never creates)", err)
	}
}
