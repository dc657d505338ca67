package redact

import "io"

// Writer redacts each write with rd before passing it on. Writes must not
// cut a secret in two: progress is written a line at a time.
type Writer struct {
	W  io.Writer
	Rd Func
}

func (w Writer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(w.W, w.Rd(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
