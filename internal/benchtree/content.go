package benchtree

import (
	"bytes"
	"fmt"
)

// The generated text is JavaScript-, JSON- and Markdown-like, with the
// benchmark queries' targets (scripts/bench-search.sh) at rates like a
// real tree's: a rare literal, rare snake_case calls and number-letter
// runs, many near misses (one underscore, _interop helpers).

var kinds = []string{"plugin", "helper", "preset", "core", "types", "parser", "traverse", "generator", "runtime", "standalone"}

var words = []string{
	"arrow", "async", "await", "block", "scoping", "class", "properties", "computed", "destructuring", "duplicate",
	"keys", "exponent", "operator", "for", "of", "function", "name", "literals", "member", "expression", "modules",
	"commonjs", "amd", "systemjs", "umd", "new", "target", "object", "super", "parameters", "shorthand", "spread",
	"sticky", "regex", "template", "typeof", "symbol", "unicode", "escapes", "react", "jsx", "flow", "strip", "types",
	"typescript", "decorators", "private", "methods", "optional", "chaining", "nullish", "coalescing", "numeric",
	"separator", "logical", "assignment", "static", "regenerator", "runtime", "corejs", "polyfill", "env", "targets",
}

var idents = []string{
	"path", "node", "scope", "state", "file", "opts", "t", "types", "template", "helper", "parent", "container",
	"binding", "identifier", "callee", "args", "body", "params", "id", "key", "value", "left", "right", "init",
	"declarations", "specifiers", "source", "loc", "start", "end", "tokens", "comments", "options", "plugins",
	"_interopRequireDefault", "_classCallCheck", "_defineProperty", "_foo", "_bar", "_this", "_ref", "_i", "_len",
	"buildCodeFrameError", "getBindingIdentifiers", "isIdentifier", "replaceWith", "insertBefore", "unshiftContainer",
	"foo_bar", "max_depth", "is_strict", "has_own", "to_string",
}

var stmts = []string{
	"const %s = %s.%s(%s);",
	"if (%s.%s(%s)) return %s;",
	"var %s = _interopRequireDefault(require(\"%s\"));",
	"%s.%s = function (%s, %s) {",
	"export default function %s(%s) {",
	"  return %s.%s(%s, %s);",
	"}",
	"// %s %s %s",
	"for (const %s of %s.%s) {",
	"throw %s.buildCodeFrameError(\"%s %s\");",
	"let %s = [%s, %s, %s];",
	"%s(%s, { %s: %s });",
}

// rare are inserted about once per 1,500 code lines each.
var rare = []string{
	"  if (err === ErrUnexpectedEOF) return null;",
	"throw new Error(\"deadline exceeded\");",
	"// ErrShortWrite: the stream ended early",
	"const id = node_id_lookup(scope, key);",
	"const tmp = abc123Def + x9;",
	"await check_for_cycles(graph);",
	"// Deadline Exceeded while waiting",
}

func (g *gen) code(lines int) []byte {
	var b bytes.Buffer
	b.WriteString("\"use strict\";\n\n")
	indent := 0
	for range lines {
		if g.r.IntN(1500) == 0 {
			b.WriteString(pick(g.r, rare) + "\n")
			continue
		}
		s := pick(g.r, stmts)
		args := make([]any, bytes.Count([]byte(s), []byte("%s")))
		for i := range args {
			args[i] = pick(g.r, idents)
		}
		line := fmt.Sprintf(s, args...)
		for range indent {
			b.WriteString("  ")
		}
		b.WriteString(line + "\n")
		switch {
		case line[len(line)-1] == '{' && indent < 4:
			indent++
		case line == "}" && indent > 0:
			indent--
		}
	}
	return b.Bytes()
}

// ast is a Babel-style JSON AST dump: many short lines of keys, numbers
// and type names.
func (g *gen) ast(lines int) []byte {
	var b bytes.Buffer
	b.WriteString("{\n  \"type\": \"File\",\n")
	pos := 0
	for i := range lines {
		pos += g.r.IntN(9)
		switch i % 6 {
		case 0:
			fmt.Fprintf(&b, "      \"type\": \"%s\",\n", pick(g.r, []string{"Identifier", "CallExpression", "MemberExpression", "BlockStatement", "ExpressionStatement", "StringLiteral"}))
		case 1:
			fmt.Fprintf(&b, "      \"start\":%d,\"end\":%d,\"loc\":{\"start\":{\"line\":%d,\"column\":%d,\"index\":%d}},\n", pos, pos+g.r.IntN(40), i/6+1, g.r.IntN(60), pos)
		case 2:
			fmt.Fprintf(&b, "      \"name\": \"%s\",\n", pick(g.r, idents))
		case 3:
			b.WriteString("      \"extra\": {\"parenthesized\": false},\n")
		case 4:
			fmt.Fprintf(&b, "      \"value\": \"%s %s\"\n", pick(g.r, words), pick(g.r, words))
		default:
			b.WriteString("    },\n")
		}
	}
	b.WriteString("}\n")
	return b.Bytes()
}

func (g *gen) json(lines int) []byte {
	var b bytes.Buffer
	b.WriteString("{\n")
	for i := range lines {
		sep := ","
		if i == lines-1 {
			sep = ""
		}
		fmt.Fprintf(&b, "  \"%s-%s\": \"^7.%d.%d\"%s\n", pick(g.r, words), pick(g.r, words), g.r.IntN(30), g.r.IntN(10), sep)
	}
	b.WriteString("}\n")
	return b.Bytes()
}

func (g *gen) prose(lines int) []byte {
	var b bytes.Buffer
	b.WriteString("# " + pick(g.r, words) + "\n\n")
	for range lines {
		for k := range 6 + g.r.IntN(10) {
			if k > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(pick(g.r, words))
		}
		b.WriteString(".\n")
	}
	return b.Bytes()
}
