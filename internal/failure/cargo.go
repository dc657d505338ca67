package failure

import (
	"strings"
)

const (
	srcCargo = "cargo"
	srcRustc = "rustc"
)

// cargo recognizes `cargo test` output: "Running <target>" per test
// binary, "test x ... FAILED", the "---- x stdout ----" blocks with the
// panic location and message, and the "failures:" name list.
type cargo struct {
	col     *collector
	target  string
	failed  []string
	blocks  map[string]*Failure
	cur     *Failure
	state   cargoState
	msg     lines
	excerpt lines
}

type cargoState int

const (
	cargoNone cargoState = iota
	cargoBlock
	cargoMessage
	cargoBacktrace
	cargoList
)

func newCargo(col *collector) *cargo { return &cargo{col: col, blocks: map[string]*Failure{}} }

func (c *cargo) line(s string) {
	t := strings.TrimLeft(s, " ")
	switch {
	case strings.HasPrefix(t, "Running ") && strings.HasSuffix(t, ")"):
		c.flush()
		rest := strings.TrimPrefix(t, "Running ")
		rest = strings.TrimPrefix(rest, "unittests ")
		if i := strings.LastIndex(rest, " ("); i > 0 {
			rest = rest[:i]
		}
		c.target = keep(rest)
		return
	case strings.HasPrefix(t, "Doc-tests "):
		c.flush()
		c.target = keep(strings.TrimSpace(strings.TrimPrefix(t, "Doc-tests ")) + " (doc-tests)")
		return
	case strings.HasPrefix(s, "test ") && strings.HasSuffix(s, " ... FAILED"):
		name := strings.TrimSuffix(strings.TrimPrefix(s, "test "), " ... FAILED")
		// A #[should_panic] test is listed as "x - should panic"; its id
		// (in the blocks, the failures list and for re-running) is "x".
		name = strings.TrimSuffix(name, " - should panic")
		c.addName(name)
		return
	case strings.HasPrefix(s, "---- ") && strings.HasSuffix(s, " ----"):
		c.endBlock()
		name := strings.TrimSuffix(strings.TrimPrefix(s, "---- "), " ----")
		name = strings.TrimSuffix(strings.TrimSuffix(name, " stdout"), " stderr")
		c.cur = &Failure{ID: keep(name)}
		c.msg = newLines(maxExcerptLines, maxMessage)
		c.excerpt = newLines(maxExcerptLines, maxExcerpt)
		c.state = cargoBlock
		return
	case s == "failures:":
		c.endBlock()
		c.state = cargoList
		return
	case strings.HasPrefix(s, "test result: "):
		c.endBlock()
		c.flush()
		return
	}
	switch c.state {
	case cargoBlock, cargoMessage, cargoBacktrace:
		c.blockLine(s, t)
	case cargoList:
		if strings.HasPrefix(s, "    ") && t != "" && !strings.Contains(t, " ") {
			c.addName(t)
		}
	}
}

func (c *cargo) addName(name string) {
	for _, n := range c.failed {
		if n == name {
			return
		}
	}
	if len(c.failed) < maxFailures {
		c.failed = append(c.failed, keep(name))
	}
}

// blockLine reads a "---- x stdout ----" block.
func (c *cargo) blockLine(s, t string) {
	if rest, ok := strings.CutPrefix(s, "note: test did not panic as expected"); ok {
		// #[should_panic] test that returned normally: " at src/lib.rs:22:8".
		if loc, ok := strings.CutPrefix(rest, " at "); ok && c.cur.Location == "" {
			c.cur.Location = keep(strings.TrimSpace(loc))
		}
		c.msg.add("test did not panic as expected")
		c.state = cargoMessage
		return
	}
	if rest, ok := strings.CutPrefix(s, "note: panic did not contain expected string"); ok {
		// #[should_panic(expected = ...)] with another message; the
		// panic message and the expected substring follow.
		c.msg.add("panic did not contain expected string" + rest)
		c.state = cargoMessage
		return
	}
	if c.state == cargoBlock {
		if loc, msg, ok := rustPanic(s); ok {
			c.cur.Location = keep(loc)
			if msg != "" {
				c.msg.add(msg)
			}
			c.state = cargoMessage
			return
		}
		c.excerpt.add(s)
		return
	}
	if strings.HasPrefix(s, "note: ") || s == "stack backtrace:" {
		c.state = cargoBacktrace
		if s == "stack backtrace:" {
			c.excerpt.add(s)
		}
		return
	}
	if c.state == cargoMessage {
		c.msg.add(s)
		return
	}
	// Backtrace: keep the project's frames.
	if strings.HasPrefix(t, "at ./") || strings.HasPrefix(t, "at src/") {
		c.excerpt.add(t)
	} else if len(t) > 0 && isDigit(t[0]) && !strings.Contains(t, " core::") && !strings.Contains(t, " std::") {
		c.excerpt.add(t)
	}
}

// rustPanic parses "thread 'x' (123) panicked at src/lib.rs:29:9:" (Rust
// 1.73 and later; the message follows on the next lines) and the older
// "thread 'x' panicked at 'msg', src/lib.rs:29:9".
func rustPanic(s string) (loc, msg string, ok bool) {
	if !strings.HasPrefix(s, "thread '") {
		return "", "", false
	}
	_, rest, ok := strings.Cut(s, " panicked at ")
	if !ok {
		return "", "", false
	}
	if strings.HasPrefix(rest, "'") {
		i := strings.LastIndex(rest, "', ")
		if i < 0 {
			return "", "", false
		}
		return rest[i+3:], rest[1:i], true
	}
	return strings.TrimSuffix(rest, ":"), "", true
}

func (c *cargo) endBlock() {
	if c.cur == nil {
		return
	}
	c.cur.Message = c.msg.String()
	c.cur.Excerpt = c.excerpt.String()
	if len(c.blocks) < maxFailures {
		c.blocks[c.cur.ID] = c.cur
	}
	c.cur = nil
	c.state = cargoNone
}

// flush reports the failed tests of the current test binary.
func (c *cargo) flush() {
	c.endBlock()
	for _, name := range c.failed {
		f := Failure{ID: name, Package: c.target}
		if b, ok := c.blocks[name]; ok {
			f.Location, f.Message, f.Excerpt = b.Location, b.Message, b.Excerpt
		}
		c.col.addFailure(srcCargo, f)
	}
	c.failed = nil
	clear(c.blocks)
	c.state = cargoNone
}

func (c *cargo) finish() { c.flush() }

// rustc recognizes compiler errors: "error[E0308]: msg" (or "error: msg")
// followed by " --> file:line:col".
type rustc struct {
	col     *collector
	pending string
	wait    int
}

func newRustc(col *collector) *rustc { return &rustc{col: col} }

func (r *rustc) line(s string) {
	if strings.HasPrefix(s, "error") {
		if strings.HasPrefix(s, "error[E") || strings.HasPrefix(s, "error: ") {
			r.pending = keep(s)
			r.wait = 3
			return
		}
	}
	if r.pending == "" {
		return
	}
	t := strings.TrimLeft(s, " ")
	if loc, ok := strings.CutPrefix(t, "--> "); ok {
		r.col.addBuild(srcRustc, BuildError{Location: strings.TrimSpace(loc), Message: r.pending})
		r.pending = ""
		return
	}
	if r.wait--; r.wait <= 0 {
		r.pending = ""
	}
}

func (r *rustc) finish() {}

func (c *cargo) trigger() trigger { return trigger{lead: "t-f", first: "RD"} }
func (c *cargo) idle() bool       { return c.state == cargoNone }

func (r *rustc) trigger() trigger { return trigger{lead: "e"} }
func (r *rustc) idle() bool       { return r.pending == "" }
