package actiontest

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// repoRoot is the module root: this file lives in internal/actiontest.
func repoRoot(tb testing.TB) string {
	tb.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		tb.Fatal("cannot locate the test source")
	}
	root := filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		tb.Fatalf("module root %s: %v", root, err)
	}
	return root
}

// readRepoFile reads a file of the repository by its slash path.
func readRepoFile(tb testing.TB, rel string) string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(tb), filepath.FromSlash(rel)))
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// indentOf counts leading spaces.
func indentOf(line string) int { return len(line) - len(strings.TrimLeft(line, " ")) }

// block returns the lines nested under the first line matching header
// (a regexp applied to the trimmed line), i.e. the following lines indented
// deeper than it, blank lines included. ok is false when no line matches.
func block(lines []string, header string) (body []string, ok bool) {
	re := regexp.MustCompile(header)
	for i, l := range lines {
		if !re.MatchString(strings.TrimSpace(l)) {
			continue
		}
		in := indentOf(l)
		for _, m := range lines[i+1:] {
			if strings.TrimSpace(m) != "" && indentOf(m) <= in {
				break
			}
			body = append(body, m)
		}
		return body, true
	}
	return nil, false
}

// dedent removes the common leading indentation and trailing blank lines.
func dedent(lines []string) string {
	least := -1
	for _, l := range lines {
		if strings.TrimSpace(l) != "" && (least < 0 || indentOf(l) < least) {
			least = indentOf(l)
		}
	}
	var out []string
	for _, l := range lines {
		if len(l) >= least && least > 0 {
			l = l[least:]
		}
		out = append(out, strings.TrimRight(l, " "))
	}
	return strings.TrimRight(strings.Join(out, "\n"), "\n") + "\n"
}

// stepRun returns the `run: |` script of the workflow step named name.
func stepRun(tb testing.TB, workflow, name string) string {
	tb.Helper()
	lines := strings.Split(workflow, "\n")
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if t != "- name: "+name {
			continue
		}
		// The step's keys are indented two past its "- ".
		keyIndent := indentOf(l) + 2
		for j := i + 1; j < len(lines); j++ {
			m := lines[j]
			if strings.TrimSpace(m) != "" && indentOf(m) < keyIndent {
				break
			}
			if indentOf(m) == keyIndent && strings.TrimSpace(m) == "run: |" {
				body, _ := block(lines[j:], `^run: \|$`)
				return dedent(body)
			}
		}
		tb.Fatalf("step %q has no `run: |` block", name)
	}
	tb.Fatalf("no step named %q", name)
	return ""
}

// mapping returns the "key: value" pairs directly under the first line
// matching header, at the first nested indentation.
func mapping(tb testing.TB, text, header string) map[string]string {
	tb.Helper()
	body, ok := block(strings.Split(text, "\n"), header)
	if !ok {
		tb.Fatalf("no %q block", header)
	}
	out := map[string]string{}
	in := -1
	for _, l := range body {
		if strings.TrimSpace(l) == "" || strings.HasPrefix(strings.TrimSpace(l), "#") {
			continue
		}
		if in < 0 {
			in = indentOf(l)
		}
		if indentOf(l) != in {
			continue
		}
		k, v, _ := strings.Cut(strings.TrimSpace(l), ":")
		out[k] = strings.Trim(strings.TrimSpace(v), `"`)
	}
	return out
}

// filepathGlob lists the repository files matching a slash pattern, as slash
// paths relative to root.
func filepathGlob(root, pattern string) ([]string, error) {
	matches, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(pattern)))
	for i, m := range matches {
		if matches[i], err = relSlash(root, m); err != nil {
			return nil, err
		}
	}
	return matches, err
}

// relSlash is filepath.Rel as a slash path.
func relSlash(root, p string) (string, error) {
	rel, err := filepath.Rel(root, p)
	return filepath.ToSlash(rel), err
}
