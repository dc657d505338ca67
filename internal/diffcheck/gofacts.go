package diffcheck

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// goFacts are the lines of the patterns the checks count in one Go file.
type goFacts struct {
	sleeps, recovers, discards, skips, parallels, retries, buildTags []int
	// tests maps each test function's name to its facts.
	tests map[string]testFacts
}

type testFacts struct {
	line       int
	assertions int
}

// imports are the local names of the packages the checks recognise.
type imports struct {
	time, testing, synctest string
	asserts                 map[string]bool // testify assert/require and the like
	all                     map[string]bool // every package name in scope
}

// analyze parses src (nil: the file does not exist) and collects its facts.
func analyze(name string, src []byte) (*goFacts, error) {
	facts := &goFacts{tests: map[string]testFacts{}}
	if src == nil {
		return facts, nil
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("diffcheck: %s does not parse as Go: %w", name, err)
	}
	imp := readImports(f)
	line := func(p token.Pos) int { return fset.Position(p).Line }
	isTestFile := strings.HasSuffix(name, "_test.go")

	// Calls inside a synctest bubble run on a fake clock: a sleep there
	// is instant and deterministic, not a wait.
	var bubbles [][2]token.Pos
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || imp.synctest == "" || !isPkgCall(call, imp.synctest, "Test", "Run") {
			return true
		}
		for _, a := range call.Args {
			if fl, ok := a.(*ast.FuncLit); ok {
				bubbles = append(bubbles, [2]token.Pos{fl.Pos(), fl.End()})
			}
		}
		return true
	})
	inBubble := func(p token.Pos) bool {
		for _, b := range bubbles {
			if p >= b[0] && p < b[1] {
				return true
			}
		}
		return false
	}

	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			switch {
			case imp.time != "" && isPkgCall(n, imp.time, "Sleep", "After", "Tick") && !inBubble(n.Pos()):
				facts.sleeps = append(facts.sleeps, line(n.Pos()))
			case isBuiltin(n, "recover"):
				facts.recovers = append(facts.recovers, line(n.Pos()))
			case isTestFile && (isMethodCall(n, imp, "Skip", "Skipf", "SkipNow") || (imp.testing != "" && isPkgCall(n, imp.testing, "Short"))):
				facts.skips = append(facts.skips, line(n.Pos()))
			case isTestFile && isMethodCall(n, imp, "Parallel") && len(n.Args) == 0:
				facts.parallels = append(facts.parallels, line(n.Pos()))
			}
		case *ast.AssignStmt:
			if discardsError(n) {
				facts.discards = append(facts.discards, line(n.Pos()))
			}
		case *ast.ForStmt, *ast.RangeStmt:
			if isTestFile && isRetryLoop(n, imp) {
				facts.retries = append(facts.retries, line(n.Pos()))
			}
		}
		return true
	})

	if isTestFile {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || !isTestName(fd.Name.Name) {
				continue
			}
			tf := testFacts{line: line(fd.Pos())}
			if fd.Body != nil {
				ast.Inspect(fd.Body, func(n ast.Node) bool {
					if c, ok := n.(*ast.CallExpr); ok && isAssertion(c, imp) {
						tf.assertions++
					}
					return true
				})
			}
			facts.tests[fd.Name.Name] = tf
		}
	}

	for i, l := range bytes.Split(src, []byte("\n")) {
		t := bytes.TrimSpace(l)
		if bytes.HasPrefix(t, []byte("//go:build")) || bytes.HasPrefix(t, []byte("// +build")) {
			facts.buildTags = append(facts.buildTags, i+1)
		}
	}
	return facts, nil
}

func readImports(f *ast.File) imports {
	imp := imports{asserts: map[string]bool{}, all: map[string]bool{}}
	for _, s := range f.Imports {
		p, err := strconv.Unquote(s.Path.Value)
		if err != nil {
			continue
		}
		name := p[strings.LastIndex(p, "/")+1:]
		if s.Name != nil {
			name = s.Name.Name
		}
		if name == "_" || name == "." {
			continue
		}
		imp.all[name] = true
		switch {
		case p == "time":
			imp.time = name
		case p == "testing":
			imp.testing = name
		case p == "testing/synctest":
			imp.synctest = name
		case strings.HasSuffix(p, "/assert") || strings.HasSuffix(p, "/require"):
			imp.asserts[name] = true
		}
	}
	return imp
}

// isPkgCall reports a call pkg.Name(...) for one of the names.
func isPkgCall(c *ast.CallExpr, pkg string, names ...string) bool {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok || id.Name != pkg {
		return false
	}
	for _, n := range names {
		if sel.Sel.Name == n {
			return true
		}
	}
	return false
}

// isMethodCall reports x.Name(...) where x is not a package name (so a
// method on t, b, tb or a test helper value).
func isMethodCall(c *ast.CallExpr, imp imports, names ...string) bool {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	if id, ok := sel.X.(*ast.Ident); ok && imp.all[id.Name] {
		return false
	}
	for _, n := range names {
		if sel.Sel.Name == n {
			return true
		}
	}
	return false
}

func isBuiltin(c *ast.CallExpr, name string) bool {
	id, ok := c.Fun.(*ast.Ident)
	return ok && id.Name == name
}

// isAssertion: t.Error*, t.Fatal*, t.Fail*, or any call into a testify-style
// assert/require package.
func isAssertion(c *ast.CallExpr, imp imports) bool {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	if id, ok := sel.X.(*ast.Ident); ok && imp.asserts[id.Name] {
		return true
	}
	return isMethodCall(c, imp, "Error", "Errorf", "Fatal", "Fatalf", "Fail", "FailNow")
}

// discardsError: `_ = err` (any error-named variable on the right).
func discardsError(a *ast.AssignStmt) bool {
	if a.Tok != token.ASSIGN {
		return false
	}
	for _, l := range a.Lhs {
		if id, ok := l.(*ast.Ident); !ok || id.Name != "_" {
			return false
		}
	}
	for _, r := range a.Rhs {
		if id, ok := r.(*ast.Ident); ok {
			low := strings.ToLower(id.Name)
			if strings.HasPrefix(low, "err") || strings.HasSuffix(low, "err") {
				return true
			}
		}
	}
	return false
}

// isTestName follows go test's rule: Test, Benchmark, Fuzz or Example,
// then nothing or a character that is not a lower-case letter.
func isTestName(name string) bool {
	for _, p := range []string{"Test", "Benchmark", "Fuzz", "Example"} {
		if rest, ok := strings.CutPrefix(name, p); ok {
			if rest == "" {
				return true
			}
			r, _ := utf8.DecodeRuneInString(rest)
			return !unicode.IsLower(r)
		}
	}
	return false
}

// isRetryLoop: a loop that is not over a collection and that either names
// itself a retry (retry/attempt/tries in its variables or condition) or
// leaves early (break/return) around an assertion, an err check or, in a
// counted loop, a bare `if ok { break }` — the shape of "try again until it
// passes".
func isRetryLoop(n ast.Node, imp imports) bool {
	var body *ast.BlockStmt
	var head []ast.Node
	counted := true // for i := 0; i < n; i++ or range N: a bounded number of tries
	switch l := n.(type) {
	case *ast.ForStmt:
		body = l.Body
		head = []ast.Node{l.Init, l.Cond, l.Post}
		counted = l.Init != nil && l.Cond != nil && l.Post != nil
	case *ast.RangeStmt:
		// Only `range N` over an integer literal or a retry-named bound;
		// ranging over a table or slice is a table test, not a retry.
		lit, isInt := l.X.(*ast.BasicLit)
		named := false
		if id, ok := l.X.(*ast.Ident); ok && isRetryIdent(id.Name) {
			named = true
		}
		if !(isInt && lit.Kind == token.INT) && !named {
			return false
		}
		body = l.Body
		head = []ast.Node{l.Key, l.X}
	default:
		return false
	}
	for _, h := range head {
		if h != nil && mentionsRetry(h) {
			return true
		}
	}
	var exits, checks bool
	ast.Inspect(body, func(m ast.Node) bool {
		switch m := m.(type) {
		case *ast.FuncLit:
			return false
		case *ast.IfStmt:
			// `if ok { break }` in a counted loop: stop trying once it
			// worked. (An endless loop with `if !ok { break }` drains a
			// channel; it is not a retry.)
			if counted && len(m.Body.List) == 1 {
				switch s := m.Body.List[0].(type) {
				case *ast.BranchStmt:
					if s.Tok == token.BREAK {
						checks = true
					}
				case *ast.ReturnStmt:
					checks = true
				}
			}
		case *ast.BranchStmt:
			if m.Tok == token.BREAK || m.Tok == token.GOTO {
				exits = true
			}
		case *ast.ReturnStmt:
			exits = true
		case *ast.CallExpr:
			if isAssertion(m, imp) {
				checks = true
			}
		case *ast.BinaryExpr:
			if id, ok := m.X.(*ast.Ident); ok && id.Name == "err" && (m.Op == token.EQL || m.Op == token.NEQ) {
				checks = true
			}
		}
		return true
	})
	return exits && checks
}

func mentionsRetry(n ast.Node) bool {
	found := false
	ast.Inspect(n, func(m ast.Node) bool {
		if id, ok := m.(*ast.Ident); ok && isRetryIdent(id.Name) {
			found = true
		}
		return !found
	})
	return found
}

// isRetryIdent reports an identifier with a word retry, retries, attempt(s),
// try or tries in it: maxRetries, attempt, tries_left — not entries or
// retrieve.
func isRetryIdent(name string) bool {
	for _, w := range identWords(name) {
		switch strings.ToLower(w) {
		case "retry", "retries", "attempt", "attempts", "try", "tries":
			return true
		}
	}
	return false
}

// identWords splits camelCase, PascalCase and snake_case into words.
func identWords(name string) []string {
	var words []string
	start := 0
	runes := []rune(name)
	for i := 1; i <= len(runes); i++ {
		if i == len(runes) || runes[i] == '_' || (unicode.IsUpper(runes[i]) && !unicode.IsUpper(runes[i-1])) {
			if w := strings.Trim(string(runes[start:i]), "_"); w != "" {
				words = append(words, w)
			}
			start = i
		}
	}
	return words
}
