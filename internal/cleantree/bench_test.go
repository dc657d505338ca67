package cleantree

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// benchRepo makes a repository whose one commit has n files of 1 to 2 KB
// in two levels of directories (50 × 20), with git fast-import.
func benchRepo(b *testing.B, n int) (src, last string) {
	b.Helper()
	src = filepath.Join(b.TempDir(), "src")
	run(b, "", "git", "init", "-q", "-b", "main", src)
	var stream bytes.Buffer
	stream.WriteString("commit refs/heads/main\ncommitter t <t@example.com> 0 +0000\ndata 6\nbench\n")
	var content strings.Builder
	for i := range n {
		content.Reset()
		fmt.Fprintf(&content, "package p%d\n\n", i%50)
		for j := range 15 + i%15 {
			fmt.Fprintf(&content, "// file %05d line %02d: the quick brown fox jumps over the lazy dog %03d\n", i, j, (i*31+j*7)%1000)
		}
		last = fmt.Sprintf("d%02d/s%02d/f%05d.go", i%50, (i/50)%20, i)
		fmt.Fprintf(&stream, "M 100644 inline %s\ndata %d\n%s\n", last, content.Len(), content.String())
	}
	runStdin(b, src, &stream, "git", "fast-import", "--quiet")
	return src, last
}

func benchmarkCheckout(b *testing.B, n int) {
	src, last := benchRepo(b, n)
	ctx := context.Background()
	for b.Loop() {
		tr, err := Checkout(ctx, src, "main")
		if err != nil {
			b.Fatal(err)
		}
		if !tr.Tracked(last) || len(tr.entries) != n {
			b.Fatalf("the checkout has %d entries, want %d with %s", len(tr.entries), n, last)
		}
		if err := tr.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCheckout5k(b *testing.B)  { benchmarkCheckout(b, 5_000) }
func BenchmarkCheckout28k(b *testing.B) { benchmarkCheckout(b, 28_000) }
