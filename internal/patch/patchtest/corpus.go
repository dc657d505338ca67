// Package patchtest loads the apply_patch robustness corpus
// (internal/patch/testdata/corpus) so the engine's tests and the tool's
// tests run the same cases.
//
// A case is one text file:
//
//	comment lines
//	-- want applied --              or: -- want refused SUBSTRING --
//	-- tools refused SUBSTRING --   (optional: outcome through the tool)
//	-- file PATH [crlf] [crmark] [noeol] [exec] --
//	content
//	-- patch [crlf] [noeol] --
//	patch text
//	-- result PATH [crlf] [crmark] [noeol] [exec] --
//	expected content after the patch
//	-- gone PATH --
//
// Flags turn the stored LF text into CRLF, drop its final newline, or mark
// the file executable, so the corpus itself stays plain text. For files
// with mixed line endings, the crmark flag turns each "␍" (U+240D) that
// ends a line into a carriage return.
//
// Test fake: test data loading for tests only; product code never imports it.
package patchtest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// File is a file of a case.
type File struct {
	Data []byte
	Exec bool
}

// Outcome is what a case expects: applied, or refused with an error
// containing Substring.
type Outcome struct {
	Applied   bool
	Substring string
}

// Case is one corpus case.
type Case struct {
	Name    string
	Comment string
	Want    Outcome
	// Tools is the outcome through the apply_patch tool, when it differs
	// (protected paths are a policy matter the engine does not know).
	Tools *Outcome
	Files map[string]File
	Patch string
	// Result is the expected tree after an applied patch: Files, updated by
	// the result sections, minus the gone ones.
	Result map[string]File
}

var header = regexp.MustCompile(`^-- (want|tools|file|patch|result|gone)(?: (.*?))? --$`)

// Load reads every *.txt case of dir, sorted by name.
func Load(dir string) ([]*Case, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var out []*Case
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			return nil, err
		}
		c, err := parse(strings.TrimSuffix(filepath.Base(n), ".txt"), string(data))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		out = append(out, c)
	}
	return out, nil
}

type section struct {
	kind, arg string
	body      []string
}

func parse(name, text string) (*Case, error) {
	c := &Case{Name: name, Files: map[string]File{}, Result: map[string]File{}}
	var secs []*section
	var comment []string
	for _, l := range strings.SplitAfter(text, "\n") {
		if m := header.FindStringSubmatch(strings.TrimSuffix(l, "\n")); m != nil {
			secs = append(secs, &section{kind: m[1], arg: m[2]})
			continue
		}
		if len(secs) == 0 {
			comment = append(comment, l)
			continue
		}
		s := secs[len(secs)-1]
		s.body = append(s.body, l)
	}
	c.Comment = strings.TrimSpace(strings.Join(comment, ""))
	gone := map[string]bool{}
	results := map[string]File{}
	sawWant, sawPatch := false, false
	for _, s := range secs {
		body := strings.Join(s.body, "")
		switch s.kind {
		case "want", "tools":
			o, err := outcome(s.arg)
			if err != nil {
				return nil, err
			}
			if s.kind == "want" {
				c.Want, sawWant = o, true
			} else {
				c.Tools = &o
			}
		case "patch":
			data, _, _, err := flags("patch "+s.arg, body)
			if err != nil {
				return nil, err
			}
			c.Patch, sawPatch = string(data), true
		case "file", "result":
			data, p, exec, err := flags(s.arg, body)
			if err != nil {
				return nil, err
			}
			if s.kind == "file" {
				c.Files[p] = File{Data: data, Exec: exec}
			} else {
				results[p] = File{Data: data, Exec: exec}
			}
		case "gone":
			gone[strings.TrimSpace(s.arg)] = true
		}
	}
	if !sawWant || !sawPatch {
		return nil, fmt.Errorf("a case needs a want and a patch section")
	}
	for p, f := range c.Files {
		if !gone[p] {
			c.Result[p] = f
		}
	}
	for p, f := range results {
		c.Result[p] = f
	}
	return c, nil
}

func outcome(arg string) (Outcome, error) {
	switch {
	case arg == "applied":
		return Outcome{Applied: true}, nil
	case strings.HasPrefix(arg, "refused "):
		return Outcome{Substring: strings.TrimPrefix(arg, "refused ")}, nil
	}
	return Outcome{}, fmt.Errorf("bad outcome %q: want 'applied' or 'refused SUBSTRING'", arg)
}

// flags reads "PATH [crlf] [crmark] [noeol] [exec]" and transforms body accordingly.
func flags(arg, body string) (data []byte, path string, exec bool, err error) {
	f := strings.Fields(arg)
	if len(f) == 0 {
		return nil, "", false, fmt.Errorf("section without a path")
	}
	path = f[0]
	for _, fl := range f[1:] {
		switch fl {
		case "crlf":
			body = strings.ReplaceAll(body, "\n", "\r\n")
		case "crmark":
			body = strings.ReplaceAll(body, "␍\n", "\r\n")
		case "noeol":
			body = strings.TrimSuffix(strings.TrimSuffix(body, "\n"), "\r")
		case "exec":
			exec = true
		default:
			return nil, "", false, fmt.Errorf("unknown flag %q", fl)
		}
	}
	return []byte(body), path, exec, nil
}
