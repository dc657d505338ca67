package failure

import (
	"strings"
)

const (
	srcTAP      = "node-test"
	srcNodeSpec = "node-test"
	// nodeSubtestsFailed is the failureType of a suite that failed only
	// because of its subtests.
	nodeSubtestsFailed = "subtestsFailed"
)

func indentOf(s string) int { return len(s) - len(strings.TrimLeft(s, " ")) }

// nodeTAP recognizes TAP as node's test runner writes it: "# Subtest:"
// nesting, "not ok N - name" and the YAML diagnostics (location, error,
// stack, failureType).
type nodeTAP struct {
	col      *collector
	names    []string
	pending  bool
	id       string
	level    int
	inDiag   bool
	diagInd  int
	key      string
	keyInd   int
	blockInd int
	vals     map[string]*lines
}

func newNodeTAP(col *collector) *nodeTAP { return &nodeTAP{col: col} }

func (n *nodeTAP) line(s string) {
	ind := indentOf(s)
	t := s[ind:]
	if n.inDiag {
		n.diagLine(ind, s)
		return
	}
	if n.pending {
		if t == "---" {
			n.inDiag, n.diagInd, n.key = true, ind, ""
			return
		}
		n.emit()
	}
	if name, ok := strings.CutPrefix(t, "# Subtest: "); ok {
		level := ind / 4
		if level > len(n.names) {
			level = len(n.names)
		}
		n.names = append(n.names[:level], keep(name))
		return
	}
	if rest, ok := strings.CutPrefix(t, "not ok "); ok {
		_, name, ok := strings.Cut(rest, " - ")
		if !ok {
			return
		}
		if i := strings.Index(name, " # "); i >= 0 {
			if d := strings.ToUpper(name[i+3:]); strings.HasPrefix(d, "SKIP") || strings.HasPrefix(d, "TODO") {
				return
			}
			name = name[:i]
		}
		level := ind / 4
		path := append([]string{}, n.names[:min(level, len(n.names))]...)
		n.id = strings.Join(append(path, name), " > ")
		n.level, n.pending = level, true
		n.vals = map[string]*lines{}
	}
}

// diagLine reads the YAML block after "not ok", keeping a few keys.
func (n *nodeTAP) diagLine(ind int, s string) {
	t := s[ind:]
	if ind == n.diagInd && t == "..." {
		n.inDiag = false
		n.emit()
		return
	}
	if n.key != "" && (ind > n.keyInd || t == "") {
		if v := n.vals[n.key]; v != nil {
			if n.blockInd < 0 && t != "" {
				n.blockInd = ind
			}
			v.add(s[min(ind, max(n.blockInd, 0)):])
		}
		return
	}
	n.key = ""
	if ind != n.diagInd {
		return
	}
	k, v, ok := strings.Cut(t, ":")
	if !ok {
		return
	}
	// k is borrowed from the line: keep the constant it equals instead
	// (it is a map key and outlives the line).
	switch k {
	case "location":
		k = "location"
	case "failureType":
		k = "failureType"
	case "error":
		k = "error"
	case "name":
		k = "name"
	case "stack":
		k = "stack"
	default:
		return
	}
	l := newLines(maxExcerptLines, maxMessage)
	v = strings.TrimSpace(v)
	if v == "|-" || v == "|" || v == ">-" || v == ">" || v == "" {
		n.key, n.keyInd, n.blockInd = k, ind, -1
	} else {
		l.add(yamlScalar(v))
	}
	n.vals[k] = &l
}

// yamlScalar unquotes a one-line YAML scalar.
func yamlScalar(v string) string {
	if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
		return strings.ReplaceAll(v[1:len(v)-1], "''", "'")
	}
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		r := strings.NewReplacer(`\"`, `"`, `\\`, `\`, `\n`, "\n")
		return r.Replace(v[1 : len(v)-1])
	}
	return v
}

func (n *nodeTAP) val(k string) string {
	if v := n.vals[k]; v != nil {
		return strings.TrimSpace(v.String())
	}
	return ""
}

func (n *nodeTAP) emit() {
	if !n.pending {
		return
	}
	n.pending, n.inDiag = false, false
	if n.val("failureType") == nodeSubtestsFailed {
		return
	}
	msg := n.val("error")
	if name := n.val("name"); name != "" && !strings.HasPrefix(msg, name) {
		msg = name + ": " + msg
	}
	where := n.val("location")
	file, _ := splitLoc(where)
	stack := n.val("stack")
	loc := n.col.proj.firstLoc(stack)
	if loc == "" {
		loc = where
	}
	n.col.addFailure(srcTAP, Failure{ID: n.id, Package: file, Location: loc, Message: msg, Excerpt: stack})
}

func (n *nodeTAP) finish() { n.emit() }

// nodeSpec recognizes node's spec reporter: "▶ suite" nesting, "✖ name"
// failures with the error and its stack, and the "✖ failing tests:"
// summary, which names each failure's file.
type nodeSpec struct {
	col       *collector
	suites    []string
	pending   []Failure
	cur       *Failure
	curInd    int
	msg       lines
	excerpt   lines
	msgDone   bool
	inSummary bool
	sumFile   string
	skipping  bool
}

func newNodeSpec(col *collector) *nodeSpec { return &nodeSpec{col: col} }

// specName trims the duration and directives from "name (1.2ms)".
func specName(s string) string {
	if i := strings.LastIndex(s, " ("); i > 0 && strings.HasSuffix(s, ")") {
		s = s[:i]
	}
	if i := strings.Index(s, " # "); i > 0 {
		s = s[:i]
	}
	return s
}

func (n *nodeSpec) line(s string) {
	ind := indentOf(s)
	t := s[ind:]
	switch {
	case strings.HasPrefix(t, "▶ "):
		n.end()
		level := ind / 2
		name := t[len("▶ "):]
		if strings.HasSuffix(name, ")") && level < len(n.suites) && specName(name) == n.suites[level] {
			n.suites = n.suites[:level] // a passed suite's closing line
			return
		}
		n.suites = append(n.suites[:min(level, len(n.suites))], keep(specName(name)))
	case strings.HasPrefix(t, "✔ "), strings.HasPrefix(t, "ℹ "), strings.HasPrefix(t, "﹣ "):
		n.end()
	case t == "✖ failing tests:":
		n.end()
		n.inSummary = true
	case strings.HasPrefix(t, "test at ") && n.inSummary:
		n.end()
		file, _ := splitLoc(t[len("test at "):])
		n.sumFile = keep(file)
	case strings.HasPrefix(t, "✖ "):
		n.end()
		n.failLine(ind, specName(t[len("✖ "):]))
	default:
		if n.cur != nil || n.skipping {
			n.body(ind, s, t)
		}
	}
}

func (n *nodeSpec) failLine(ind int, name string) {
	if n.inSummary {
		for i := range n.pending {
			p := &n.pending[i]
			if (p.ID == name || strings.HasSuffix(p.ID, " > "+name)) && p.Package == "" {
				p.Package = n.sumFile
				n.skipping = true
				return
			}
		}
		for _, p := range n.pending {
			if p.ID == name || strings.HasSuffix(p.ID, " > "+name) {
				n.skipping = true
				return
			}
		}
	} else {
		level := ind / 2
		if level < len(n.suites) && n.suites[level] == name {
			n.suites = n.suites[:level] // a failed suite's closing line
			return
		}
		path := append([]string{}, n.suites[:min(level, len(n.suites))]...)
		name = strings.Join(append(path, name), " > ")
	}
	n.cur = &Failure{ID: keep(name)}
	if n.inSummary {
		n.cur.Package = n.sumFile
	}
	n.curInd = ind
	n.msg = newLines(maxExcerptLines, maxMessage)
	n.excerpt = newLines(maxExcerptLines, maxExcerpt)
	n.msgDone = false
}

func (n *nodeSpec) body(ind int, s, t string) {
	if t == "" {
		if n.cur != nil && !n.msgDone {
			n.msg.add("")
		}
		return
	}
	if n.skipping {
		return
	}
	if ind <= n.curInd {
		n.end()
		return
	}
	if strings.HasPrefix(t, "at ") {
		n.msgDone = true
		if n.cur.Location == "" {
			n.cur.Location = keep(n.col.proj.firstLoc(t))
		}
		n.excerpt.add(t)
		return
	}
	if n.msgDone {
		n.excerpt.add(t)
		return
	}
	n.msg.add(strings.TrimPrefix(s, strings.Repeat(" ", n.curInd+2)))
}

func (n *nodeSpec) end() {
	n.skipping = false
	if n.cur == nil {
		return
	}
	f := *n.cur
	n.cur = nil
	f.Message = strings.TrimSpace(n.msg.String())
	f.Excerpt = n.excerpt.String()
	if len(n.pending) < maxFailures {
		n.pending = append(n.pending, f)
	}
}

func (n *nodeSpec) finish() {
	n.end()
	for _, f := range n.pending {
		n.col.addFailure(srcNodeSpec, f)
	}
	n.pending = nil
}

func (n *nodeTAP) trigger() trigger { return trigger{first: "#n"} }
func (n *nodeTAP) idle() bool       { return !n.inDiag && !n.pending }

// \xe2 starts "▶", "✔", "ℹ", "✖"; \xef starts "﹣".
func (n *nodeSpec) trigger() trigger { return trigger{first: "\xe2\xeft"} }
func (n *nodeSpec) idle() bool       { return n.cur == nil && !n.skipping }
