package testcmd

import (
	"strings"
	"testing"
)

func TestParseRunners(t *testing.T) {
	t.Parallel()
	tests := map[string]Runner{
		"go test ./...":                      Go,
		"/usr/local/go/bin/go test ./...":    Go,
		"go.exe test ./...":                  Go,
		`'C:\Go\bin\go.exe' test ./...`:      Go,
		"go vet ./...":                       Unknown,
		"gotest ./...":                       Unknown,
		"pytest":                             Pytest,
		"py.test -x":                         Pytest,
		"python -m pytest -q":                Pytest,
		"python3.12 -m pytest":               Pytest,
		"python -m unittest":                 Unknown,
		"jest --ci":                          Jest,
		"npx jest":                           Jest,
		"npx vitest run":                     Vitest,
		"./node_modules/.bin/vitest":         Vitest,
		"npm test":                           Npm,
		"npm t":                              Npm,
		"npm run test":                       Npm,
		"npm run lint":                       Unknown,
		"cargo test":                         Cargo,
		"cargo +nightly test":                Cargo,
		"cargo build":                        Unknown,
		"make test":                          Unknown,
		"go test ./... && x":                 Unknown,
		"CGO_ENABLED=0 go test ./...":        Unknown,
		`sh -c 'go test ./...'`:              Unknown,
		"go test -run 'TestA|TestB' ./...":   Go,
		"  go test ./...  ":                  Go,
		"go test ./... # run everything now": Unknown,
	}
	for line, want := range tests {
		c, err := Parse(line)
		if err != nil || c.Runner() != want {
			t.Errorf("Parse(%q): runner %v, err %v; want %v", line, c.Runner(), err, want)
		}
	}
}

func TestParseShellAndArgv(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		line      string
		shell     bool
		narrow    bool
		wantArgv0 string
	}{
		{"go test ./...", false, true, "go"},
		{"go test ./... | tee out.txt", true, false, "sh"},
		{"make test", false, false, "make"},
		{"FOO=1 pytest", true, false, "sh"},
	} {
		c := mustParse(t, tt.line)
		inv, err := c.Argv(nil, Selection{}, Plain)
		if err != nil {
			t.Fatalf("%q: Argv: %v", tt.line, err)
		}
		if c.Shell() != tt.shell || c.Narrowable() != tt.narrow || inv.Argv[0] != tt.wantArgv0 {
			t.Errorf("%q: shell %v narrowable %v argv %q; want %v %v %s", tt.line, c.Shell(), c.Narrowable(), inv.Argv, tt.shell, tt.narrow, tt.wantArgv0)
		}
		if c.Shell() && (len(inv.Argv) != 3 || inv.Argv[1] != "-c" || inv.Argv[2] != tt.line) {
			t.Errorf("%q: shell argv %q", tt.line, inv.Argv)
		}
	}
}

// A command no shell could parse is refused at wiring time, with a reason.
func TestParseRefusesBadCommands(t *testing.T) {
	t.Parallel()
	for line, want := range map[string]string{
		"":                       "no test command",
		"  \t ":                  "no test command",
		"go test 'unterminated":  "unterminated single quote",
		`pytest -k "not slow`:    "unterminated double quote",
		`go test ./... \`:        "lone backslash",
		`npm test -- "a b" 'c d`: "unterminated single quote",
	} {
		c, err := Parse(line)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %+v, %v; want an error saying %q", line, c, err, want)
		}
	}
}

func TestNarrowingHelp(t *testing.T) {
	t.Parallel()
	for line, want := range map[string]string{
		"go test ./...":   "Go test names",
		"pytest":          "node ids",
		"cargo test":      "crate names",
		"npx jest":        "(-t)",
		"make test":       "cannot be narrowed",
		"go test | tee x": "cannot be narrowed",
	} {
		if got := mustParse(t, line).NarrowingHelp(); !strings.Contains(got, want) {
			t.Errorf("%q: help %q, want %q", line, got, want)
		}
	}
}
