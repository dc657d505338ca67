package safefile

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Writing outputs. Every file mini-agent writes at a path someone named (the
// bundle, the PR body, the trace, the reports, a downloaded log) goes
// through WriteFile, Create or Append, because the directory it lands in may be one
// that code under test can write to (the workspace, /tmp): test code can
// plant a symlink at the output path ("bundle.json" → ~/.config/go/env), and
// mini-agent, running outside the sandbox with the user's rights, would
// write through it. Both refuse a target that is a symbolic link or
// anything but a regular file, and neither ever opens the target in a way
// that follows a link.
//
// The directories on the way to the target are the caller's choice and are
// resolved as usual (a user's output directory may well be a symlink, as
// /tmp is on macOS); only the last component is guarded (so a path like
// /dev/stdout, itself a link, is refused). Each pins the target's directory
// by opening it first: everything after that (the check, the temporary
// file, the rename; Create's open is checked to be that directory's entry)
// happens in that very directory even if a name on the path to it is
// swapped meanwhile.

// ErrRefused is wrapped by every refusal of an output path (see
// RefusedError): a link or something other than a regular file at the
// target, or a target swapped while it was written.
var ErrRefused = errors.New("output path refused")

// RefusedError says why an output was not written at Path.
type RefusedError struct {
	Path string
	// Is is what the path is ("is a symbolic link", "is a named pipe, not
	// a regular file", "is a file with 2 hard links") or what happened to
	// it ("was replaced while mini-agent wrote it (by a symbolic link)").
	Is string
	// Why is the rule, for people.
	Why string
}

func (e *RefusedError) Error() string { return e.Path + " " + e.Is + ": " + e.Why }

// Unwrap makes errors.Is(err, ErrRefused) true.
func (e *RefusedError) Unwrap() error { return ErrRefused }

func refuseMode(path string, mode fs.FileMode) error {
	if mode&fs.ModeSymlink != 0 {
		return &RefusedError{Path: path, Is: "is a symbolic link", Why: "mini-agent does not write through links"}
	}
	return &RefusedError{Path: path, Is: "is a " + TypeName(mode) + ", not a regular file",
		Why: "mini-agent writes its outputs only to regular files"}
}

// CheckTarget reports an error unless the entry at path is absent or a
// regular file: what WriteFile and Create refuse, said before a run rather
// than after it. The write itself checks again.
func CheckTarget(path string) error {
	root, base, err := openParent(path)
	if err != nil {
		return err
	}
	defer root.Close()
	_, err = checkAt(root, base, path)
	return err
}

// openParent opens path's directory as a root and returns the last
// component.
func openParent(path string) (*os.Root, string, error) {
	dir, base := splitOS(path)
	if base == "" || base == "." || base == ".." {
		return nil, "", &fs.PathError{Op: "write", Path: path, Err: errors.New("not a file name")}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, "", err
	}
	return root, base, nil
}

// checkAt is CheckTarget on an open directory: the entry's info (nil when
// absent).
func checkAt(root *os.Root, base, path string) (fs.FileInfo, error) {
	fi, err := root.Lstat(base)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, err
	case !fi.Mode().IsRegular():
		return nil, refuseMode(path, fi.Mode())
	}
	return fi, nil
}

// WriteFile writes data to path, never through a link: the target must be
// absent or a regular file (a symlink, even one pointing at a regular file,
// is refused with a *RefusedError naming the path and what it is). The data
// goes to a new temporary file in the target's directory (created with
// O_EXCL, so a name planted there is never opened), is synced, gets perm
// (exactly: the umask does not apply), and is renamed over the target. The
// rename replaces a directory entry and never follows one: a symlink planted
// at the target between the check and the rename is replaced, not written
// through, and a hard link to a file elsewhere keeps that file's content.
// Readers see the old file or the whole new one, never a part. On an error
// the temporary file is removed and the target is left as it was.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	root, base, err := openParent(path)
	if err != nil {
		return err
	}
	defer root.Close()
	if _, err := checkAt(root, base, path); err != nil {
		return err
	}
	tmp, f, err := createTemp(root, base)
	if err != nil {
		return &fs.PathError{Op: "write", Path: path, Err: err}
	}
	done := false
	defer func() {
		if !done {
			f.Close()
			root.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return &fs.PathError{Op: "write", Path: path, Err: err}
	}
	if err := f.Sync(); err != nil {
		return &fs.PathError{Op: "write", Path: path, Err: err}
	}
	if err := f.Chmod(perm); err != nil {
		return &fs.PathError{Op: "write", Path: path, Err: err}
	}
	if err := f.Close(); err != nil {
		return &fs.PathError{Op: "write", Path: path, Err: err}
	}
	if beforeRename != nil {
		beforeRename()
	}
	if err := root.Rename(tmp, base); err != nil {
		// A directory planted at the target since the check: rename
		// refuses to replace it with a file.
		if fi, lerr := root.Lstat(base); lerr == nil && !fi.Mode().IsRegular() {
			return refuseMode(path, fi.Mode())
		}
		return &fs.PathError{Op: "write", Path: path, Err: err}
	}
	done = true
	if d, err := root.Open("."); err == nil {
		d.Sync() // best effort: the rename reaches the disk
		d.Close()
	}
	return nil
}

// beforeRename, when set (by tests), runs between the check and the
// rename: where a planted link would land.
var beforeRename func()

// createTemp creates a fresh file next to base: ".base.tmp-XXXXXXXX",
// O_EXCL, mode 0600 until written.
func createTemp(root *os.Root, base string) (string, *os.File, error) {
	prefix := base
	if len(prefix) > 64 {
		prefix = prefix[:64] // room for the suffix under NAME_MAX
	}
	var err error
	for range 20 {
		name := "." + prefix + ".tmp-" + rand.Text()[:10]
		var f *os.File
		f, err = root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", nil, err
		}
		return name, f, nil
	}
	return "", nil, fmt.Errorf("no free temporary name next to %s: %w", base, err)
}

// File is an output written as it goes (the trace): see Create.
type File struct {
	*os.File
	path string
	root *os.Root // the target's directory, pinned at Create
	base string
	fi   fs.FileInfo // the file as opened
}

// Create opens path for writing a streamed output, never through a link:
// the target must be absent or a regular file with no other hard link (a
// symlink, a FIFO, a device, a directory, or a file that is also another
// name of a file elsewhere is refused with a *RefusedError). The last
// component is opened with O_NOFOLLOW and O_NONBLOCK (a FIFO swapped in
// cannot stall the open), checked on the open descriptor (a regular file,
// one link, the very entry in the pinned directory) and only then
// truncated and given perm.
//
// Create writes the target itself rather than a temporary file renamed at
// the end, on purpose: the trace is readable (tail -f) while the run goes,
// a run killed half-way leaves what it wrote at the path, and no temporary
// file sits in the workspace during the run (where it would show up in the
// change; the output paths themselves are left out of it). Once open, the
// descriptor is the file: replacing the path during the run (by a symlink
// to a file elsewhere) cannot redirect a single write. Close says so if it
// happened — what was written is then in the displaced file only.
func Create(path string, perm os.FileMode) (*File, error) {
	root, base, err := openParent(path)
	if err != nil {
		return nil, err
	}
	f, err := openOutput(root, base, path, os.O_CREATE, perm)
	if err != nil {
		root.Close()
		return nil, err
	}
	return f, nil
}

// Append opens the existing regular file at path for appending, with
// Create's guards (no link followed, no FIFO, no other hard link, the very
// entry in the pinned directory): for a log mini-agent wrote itself in a
// directory test code can reach, to add to after the run.
func Append(path string) (*File, error) {
	root, base, err := openParent(path)
	if err != nil {
		return nil, err
	}
	f, err := openOutput(root, base, path, os.O_APPEND, 0)
	if err != nil {
		root.Close()
		return nil, err
	}
	return f, nil
}

// openOutput is Create (flag O_CREATE: truncated, given perm) and Append
// (flag O_APPEND).
func openOutput(root *os.Root, base, path string, flag int, perm os.FileMode) (*File, error) {
	if _, err := checkAt(root, base, path); err != nil {
		return nil, err
	}
	f, err := openNoFollow(root, base, path, flag, perm)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, refuseMode(path, fi.Mode())
	}
	if n := links(fi); n > 1 {
		f.Close()
		return nil, &RefusedError{Path: path, Is: fmt.Sprintf("is a file with %d hard links", n),
			Why: "mini-agent does not write through links (another name of the same file may be outside)"}
	}
	// The descriptor must be the entry in the pinned directory, not one a
	// swap of a parent directory put at the path.
	if lfi, err := root.Lstat(base); err != nil || !os.SameFile(fi, lfi) {
		f.Close()
		if err == nil {
			err = &RefusedError{Path: path, Is: "was replaced while opened", Why: "mini-agent does not write through links"}
		}
		return nil, err
	}
	if flag&os.O_CREATE != 0 {
		if err := f.Truncate(0); err != nil {
			f.Close()
			return nil, &fs.PathError{Op: "truncate", Path: path, Err: err}
		}
		if err := f.Chmod(perm); err != nil {
			f.Close()
			return nil, &fs.PathError{Op: "chmod", Path: path, Err: err}
		}
	}
	return &File{File: f, path: path, root: root, base: base, fi: fi}, nil
}

// Close closes the file, then checks that the path still names it: an
// error (a *RefusedError) when the path was removed or replaced while the
// file was written (nothing was written through the replacement). A trace
// cut short by an error is still at its path, as far as it got. Closing
// again returns os.ErrClosed.
func (f *File) Close() error {
	if f.root == nil {
		return os.ErrClosed
	}
	err := f.File.Close()
	if lfi, lerr := f.root.Lstat(f.base); lerr != nil || !os.SameFile(f.fi, lfi) {
		is := "was removed while mini-agent wrote it"
		if lerr == nil {
			is = "was replaced while mini-agent wrote it (by a " + TypeName(lfi.Mode()) + ")"
		}
		err = errors.Join(err, &RefusedError{Path: f.path, Is: is,
			Why: "nothing was written through the replacement; what was written is lost"})
	}
	f.root.Close()
	f.root = nil
	return err
}
