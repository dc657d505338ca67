package testcmd

import (
	"os"
	"path/filepath"
	"strings"
)

// Detect guesses the test command from the files at the root of dir:
// go.mod, package.json, Cargo.toml, Python project files, in that order.
// It returns "" when none is there.
func Detect(dir string) string {
	for _, c := range []struct{ file, cmd string }{
		{"go.mod", "go test ./..."},
		{"package.json", "npm test"},
		{"Cargo.toml", "cargo test"},
		{"pyproject.toml", "pytest"},
		{"pytest.ini", "pytest"},
		{"setup.cfg", "pytest"},
	} {
		if _, err := os.Stat(filepath.Join(dir, c.file)); err == nil {
			return c.cmd
		}
	}
	return ""
}

// Names turns failure ids ("TestX/sub", "path::test", "suite > name") into
// the test names a runner narrows by, each once, in order: the part after
// the last "::", and a Go subtest's top-level test.
func Names(ids []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, id := range ids {
		name := id
		if i := strings.LastIndex(name, "::"); i >= 0 {
			name = name[i+2:]
		}
		if strings.HasPrefix(name, "Test") {
			name, _, _ = strings.Cut(name, "/") // a Go subtest: narrow to its top-level test
		}
		if name != "" && !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out
}
