package config

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

var unknownField = regexp.MustCompile(`field (\S+) not found in type \S+`)

// yamlProblems turns decoder errors into one line each, naming unknown keys
// plainly and every line 1-based, as an editor shows it.
func yamlProblems(err error) []string {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return []string{syntaxProblem(err.Error())}
	}
	out := make([]string, 0, len(te.Errors))
	for _, e := range te.Errors {
		// A type error's line comes from the node: already 1-based.
		out = append(out, unknownField.ReplaceAllString(e, `unknown key "$1"`))
	}
	return out
}

var syntaxLine = regexp.MustCompile(`^(?:yaml: )?(?:line (\d+): )?(.*)$`)

// parserProblems are the problems the YAML parser (not its scanner)
// reports (go.yaml.in/yaml/v3 parserc.go). For these the library prints the
// 0-based line of the mark, one less than the line an editor shows; for
// scanner problems it adds the 1 itself. A problem on the first line gets
// no line at all, whichever reported it.
var parserProblems = []string{
	"did not find expected ',' or ']'",
	"did not find expected ',' or '}'",
	"did not find expected '-' indicator",
	"did not find expected <document start>",
	"did not find expected <stream-start>",
	"did not find expected key",
	"did not find expected node content",
	"found duplicate %TAG directive",
	"found duplicate %YAML directive",
	"found incompatible YAML document",
	"found undefined tag handle",
}

// syntaxProblem is a YAML syntax error with its 1-based line.
func syntaxProblem(msg string) string {
	m := syntaxLine.FindStringSubmatch(msg)
	problem := m[2]
	line := 1 // no line printed: the mark was on the first line
	if m[1] != "" {
		line, _ = strconv.Atoi(m[1])
		for _, p := range parserProblems {
			if strings.HasPrefix(problem, p) {
				line++
				break
			}
		}
	}
	return fmt.Sprintf("line %d: %s", line, problem)
}

// problemKey is the key path a validation problem starts with
// ("reviewers", "defaults.provider", "flaky.max-runs").
var problemKey = regexp.MustCompile(`^([a-z-]+(?:\.[a-z-]+)?): `)

// withKeyLines prefixes each validation problem that names a key with the
// line of that key in data, so every problem says where it is.
func withKeyLines(data []byte, probs []string) []string {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 {
		return probs
	}
	out := make([]string, 0, len(probs))
	for _, p := range probs {
		if m := problemKey.FindStringSubmatch(p); m != nil {
			if line := keyLine(doc.Content[0], strings.Split(m[1], ".")); line > 0 {
				p = fmt.Sprintf("line %d: %s", line, p)
			}
		}
		out = append(out, p)
	}
	return out
}

// keyLine is the 1-based line of the key path in a mapping node, 0 when
// absent.
func keyLine(n *yaml.Node, path []string) int {
	for n.Kind == yaml.MappingNode {
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == path[0] {
				if len(path) == 1 {
					return n.Content[i].Line
				}
				next = n.Content[i+1]
				break
			}
		}
		if next == nil {
			return 0
		}
		n, path = next, path[1:]
	}
	return 0
}
