// Package demo carries the bundled example: a small Go module with a real
// bug and a failing test, and a scripted model trajectory that fixes it.
// `mini-agent demo` runs the whole fix pipeline on a copy of it.
//
// Leaf engine: imports nothing above it.
package demo

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/org/mini-agent/internal/gitexec"
)

//go:embed all:testdata/example
var example embed.FS

// Trajectory is the scripted model's JSONL: what a model would answer, turn
// by turn. The demo replays it; no model service is called.
//
//go:embed trajectory.jsonl
var Trajectory []byte

// TestCommand is the example's test command.
const TestCommand = "go test ./..."

// Materialize copies the example into dir, restores its go.mod (kept as
// go.mod.txt so it is not a nested module here) and commits it in a fresh
// git repository, as a CI checkout would be.
func Materialize(ctx context.Context, dir string) error {
	err := fs.WalkDir(example, "testdata/example", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, "testdata/example"), "/")
		if rel == "" {
			return nil
		}
		if rel == "go.mod.txt" {
			rel = "go.mod"
		}
		target := filepath.Join(dir, filepath.FromSlash(rel))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := example.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		return fmt.Errorf("demo: copy example: %w", err)
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "-A"},
		{"-c", "user.name=mini-agent demo", "-c", "user.email=demo@example.invalid", "commit", "-q", "-m", "example with a bug"},
	} {
		if _, err := gitexec.Run(ctx, gitexec.Options{Dir: dir}, args...); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
	}
	return nil
}
