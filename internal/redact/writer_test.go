package redact

import (
	"strings"
	"testing"
)

func TestWriterRedactsEachWrite(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	w := Writer{W: &b, Rd: New([]string{"s3cr3t-value-123"})}
	line := "token s3cr3t-value-123 seen\n"
	n, err := w.Write([]byte(line))
	if err != nil || n != len(line) {
		t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(line))
	}
	if strings.Contains(b.String(), "s3cr3t-value-123") || !strings.Contains(b.String(), "token ") {
		t.Fatalf("written %q", b.String())
	}
}
