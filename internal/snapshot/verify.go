package snapshot

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"strconv"
)

// BlobID is git's object id of a blob holding data, in the snapshot's
// object format.
func (s *Snapshot) BlobID(data []byte) string { return blobID(s.format, data) }

func blobID(format string, data []byte) string {
	var h hash.Hash
	if format == "sha256" {
		h = sha256.New()
	} else {
		h = sha1.New()
	}
	h.Write([]byte("blob " + strconv.Itoa(len(data)) + "\x00"))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// Verify checks that change c describes content, the bytes the file (or a
// symlink's target) holds now: the diff's new side must be exactly the
// file. A disagreement means git stored something other than the file
// (a filter, an attribute, a change in between) and the diff is not the
// change.
func (s *Snapshot) Verify(c Change, content []byte) error {
	if c.Status == "deleted" {
		return nil
	}
	if got := s.BlobID(content); got != c.Blob {
		return &MismatchError{Path: c.Path, DiffBlob: c.Blob, FileBlob: got}
	}
	return nil
}

// MismatchError is returned by Verify when the diff disagrees with a file.
type MismatchError struct {
	Path     string
	DiffBlob string
	FileBlob string
}

func (e *MismatchError) Error() string {
	return "the diff disagrees with the file " + e.Path + ": the diff's content is blob " + e.DiffBlob +
		", the file's bytes are blob " + e.FileBlob
}
