package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/org/mini-agent/agent"
)

// numbered returns n lines "line 1" ... "line n", newline-terminated.
func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

// readFixture is a workspace with files of every shape read_file meets.
func readFixture(t *testing.T) (*Workspace, string) {
	t.Helper()
	base := t.TempDir()
	dir := filepath.Join(base, "ws")
	fxWrite(t, base, map[string]string{"outside/secret.txt": "TOP SECRET\n"})
	long := strings.Repeat("x", 2000)
	fxWrite(t, dir, map[string]string{
		"small.txt":          "alpha\nbeta\n",
		"noeol.txt":          "one\ntwo",
		"crlf.txt":           "one\r\ntwo\r\n",
		"empty.txt":          "",
		"l1000.txt":          numbered(1000),
		"l3000.txt":          numbered(3000),
		"long.txt":           "short\n" + long + "\nafter\n",
		"utf8long.txt":       strings.Repeat("é", 300) + "\n",
		"badutf8.txt":        "ok \xff\xfe end\n",
		"wide.txt":           strings.Repeat(strings.Repeat("w", 400)+"\n", 2000),
		"bin.dat":            "text\x00more text\n",
		"late_nul.txt":       strings.Repeat("a", 9000) + "\x00\n", // NUL after the 8 KB sniff: text
		"tools/read_file.go": "package tools\n",
		"dir/one.go":         "package dir\n",
		"dir/two.go":         "package dir\n",
		"dir/sub/x.go":       "package sub\n",
		"@runs/7.log":        "WORKSPACE FILE, NOT A RUN LOG\n",
		".github/ci.yml":     "on: push\n",
	})
	fxGit(t, dir, "init", "-q")
	fxSymlink(t, dir, "../outside/secret.txt", "out_link")
	fxSymlink(t, dir, "../outside", "out_dir")
	fxSymlink(t, dir, ".git/config", "git_link")
	fxSymlink(t, dir, "small.txt", "in_link")
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	big, err := os.Create(filepath.Join(dir, "big.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := big.Truncate(readMaxFileBytes + 1); err != nil { // sparse: instant
		t.Fatal(err)
	}
	big.Close()

	ws := fxWorkspace(t, dir)
	fxWrite(t, ws.RunsDir(), map[string]string{"3.log": numbered(5), "12.log": "twelve\n"})
	fxSymlink(t, ws.RunsDir(), filepath.Join(base, "outside", "secret.txt"), "5.log")
	huge, err := os.Create(filepath.Join(ws.RunsDir(), "9.log"))
	if err != nil {
		t.Fatal(err)
	}
	huge.WriteString("text\n")
	if err := huge.Truncate(readMaxRunLogBytes + 1); err != nil { // sparse
		t.Fatal(err)
	}
	huge.Close()
	return ws, base
}

func TestReadFile(t *testing.T) {
	t.Parallel()
	ws, base := readFixture(t)
	rf := NewReadFile(ws)
	cases := []struct {
		name    string
		args    string
		code    string   // "" for success
		exact   string   // whole expected text, when set
		has     []string // substrings expected
		hasNot  []string // substrings not expected
		maxSize int      // bound on the answer length, when set
	}{
		{name: "small", args: `{"path":"small.txt"}`, exact: "   1\talpha\n   2\tbeta\n"},
		{name: "dot slash", args: `{"path":"./small.txt"}`, exact: "   1\talpha\n   2\tbeta\n"},
		{name: "no final newline", args: `{"path":"noeol.txt"}`, exact: "   1\tone\n   2\ttwo\n"},
		{name: "crlf", args: `{"path":"crlf.txt"}`, exact: "   1\tone\n   2\ttwo\n"},
		{name: "empty", args: `{"path":"empty.txt"}`, exact: "(empty file)"},
		{name: "empty past start", args: `{"path":"empty.txt","start_line":3}`, code: agent.CodeInvalidArgument, has: []string{"empty"}},
		{name: "symlink inside", args: `{"path":"in_link"}`, exact: "   1\talpha\n   2\tbeta\n"},
		{name: "default window", args: `{"path":"l1000.txt"}`,
			has:    []string{" 400\tline 400\n", "[lines 1-400 of 1000; next: start_line=401 end_line=800]"},
			hasNot: []string{"line 401\n"}},
		{name: "window", args: `{"path":"l1000.txt","start_line":10,"end_line":12}`,
			exact: "  10\tline 10\n  11\tline 11\n  12\tline 12\n[lines 10-12 of 1000; next: start_line=13 end_line=412]\n"},
		{name: "start only", args: `{"path":"l1000.txt","start_line":990}`,
			has: []string{" 990\tline 990\n", "1000\tline 1000\n", "[lines 990-1000 of 1000; end of file]"}},
		{name: "end past eof", args: `{"path":"l1000.txt","start_line":999,"end_line":5000}`,
			exact: " 999\tline 999\n1000\tline 1000\n[lines 999-1000 of 1000; end of file]\n"},
		{name: "end only", args: `{"path":"l1000.txt","end_line":2}`,
			exact: "   1\tline 1\n   2\tline 2\n[lines 1-2 of 1000; next: start_line=3 end_line=402]\n"},
		{name: "zero start means first", args: `{"path":"small.txt","start_line":0}`, exact: "   1\talpha\n   2\tbeta\n"},
		{name: "string numbers", args: `{"path":"l1000.txt","start_line":"5","end_line":5.0}`,
			exact: "   5\tline 5\n[lines 5-5 of 1000; next: start_line=6 end_line=405]\n"},
		{name: "double encoded", args: `"{\"path\":\"small.txt\"}"`, exact: "   1\talpha\n   2\tbeta\n"},
		{name: "max window", args: `{"path":"l3000.txt","start_line":1,"end_line":3000}`,
			has:    []string{"2000\tline 2000\n", "[lines 1-2000 of 3000; next: start_line=2001 end_line=2400; at most 2000 lines per call]"},
			hasNot: []string{"line 2001\n"}},
		{name: "start past end", args: `{"path":"l1000.txt","start_line":1200}`, code: agent.CodeInvalidArgument,
			has: []string{"has 1000 lines", "start_line=601 end_line=1000"}},
		{name: "end before start", args: `{"path":"l1000.txt","start_line":20,"end_line":10}`, code: agent.CodeInvalidArgument, has: []string{"before start_line"}},
		{name: "negative start", args: `{"path":"l1000.txt","start_line":-3}`, code: agent.CodeInvalidArgument, has: []string{"numbered from 1"}},
		{name: "long line cut", args: `{"path":"long.txt"}`,
			has:    []string{"   1\tshort\n", "   2\t" + strings.Repeat("x", readMaxLineBytes) + " [... line cut: 2000 bytes in all]\n", "   3\tafter\n"},
			hasNot: []string{strings.Repeat("x", readMaxLineBytes+1)}},
		{name: "utf8 cut on rune boundary", args: `{"path":"utf8long.txt"}`,
			has: []string{"   1\t" + strings.Repeat("é", readMaxLineBytes/2) + " [... line cut: 600 bytes in all]"}},
		{name: "invalid utf8 replaced", args: `{"path":"badutf8.txt"}`, has: []string{"ok \uFFFD end"}},
		{name: "answer bound", args: `{"path":"wide.txt","start_line":1,"end_line":2000}`,
			has: []string{"of 2000; next: start_line=", "stopped at the 40 KiB answer limit"}, maxSize: readMaxAnswerBytes},
		{name: "binary", args: `{"path":"bin.dat"}`, code: agent.CodeInvalidArgument, has: []string{"binary"}},
		{name: "late NUL is text", args: `{"path":"late_nul.txt"}`, has: []string{"   1\taaaa"}},
		{name: "size cap", args: `{"path":"big.txt"}`, code: agent.CodeInvalidArgument, has: []string{"over the 10 MiB read_file limit"}},
		{name: "fifo", args: `{"path":"fifo"}`, code: agent.CodeInvalidArgument, has: []string{"not a regular file"}},
		{name: "directory", args: `{"path":"dir"}`, code: agent.CodeInvalidArgument,
			has: []string{"is a directory with 3 entries", "one.go", "sub/", `"dir/one.go"`}},
		{name: "workspace root", args: `{"path":"."}`, code: agent.CodeInvalidArgument, has: []string{"small.txt", ".github/"}, hasNot: []string{" .git/", " .git,"}},
		{name: "missing with suggestion", args: `{"path":"read_file.go"}`, code: agent.CodeNotFound,
			has: []string{"does not exist", "did you mean: tools/read_file.go"}},
		{name: "missing under a file", args: `{"path":"small.txt/x"}`, code: agent.CodeNotFound, has: []string{"does not exist"}},
		{name: "missing no suggestion", args: `{"path":"qqqqqqqq.zzz"}`, code: agent.CodeNotFound, has: []string{"no similar path"}},
		{name: "dotdot", args: `{"path":"../outside/secret.txt"}`, code: agent.CodeDenied, hasNot: []string{"TOP SECRET"}},
		{name: "absolute", args: fmt.Sprintf(`{"path":%q}`, filepath.Join(base, "outside", "secret.txt")), code: agent.CodeDenied, hasNot: []string{"TOP SECRET"}},
		{name: "symlinked file outside", args: `{"path":"out_link"}`, code: agent.CodeDenied, hasNot: []string{"TOP SECRET"}},
		{name: "symlinked dir outside", args: `{"path":"out_dir/secret.txt"}`, code: agent.CodeDenied, hasNot: []string{"TOP SECRET"}},
		{name: "git config", args: `{"path":".git/config"}`, code: agent.CodeDenied},
		{name: "git HEAD", args: `{"path":".git/HEAD"}`, code: agent.CodeDenied, hasNot: []string{"ref:"}},
		{name: "symlink into git", args: `{"path":"git_link"}`, code: agent.CodeDenied},
		{name: "protected is readable", args: `{"path":".github/ci.yml"}`, exact: "   1\ton: push\n"},
		{name: "missing path arg", args: `{}`, code: agent.CodeInvalidArgument, has: []string{`"path" is required`}},
		{name: "null args", args: `null`, code: agent.CodeInvalidArgument, has: []string{`"path" is required`}},
		{name: "unknown field", args: `{"path":"small.txt","limit":5}`, code: agent.CodeInvalidArgument, has: []string{`unknown field "limit"`, "start_line"}},
		{name: "bad json", args: `{"path":`, code: agent.CodeInvalidArgument},
		{name: "trailing data", args: `{"path":"small.txt"} {}`, code: agent.CodeInvalidArgument},
		{name: "wrong type", args: `{"path":"small.txt","start_line":"ten"}`, code: agent.CodeInvalidArgument},
		// Saved run_test outputs.
		{name: "run log", args: `{"path":"@runs/3.log"}`, exact: "   1\tline 1\n   2\tline 2\n   3\tline 3\n   4\tline 4\n   5\tline 5\n"},
		{name: "run log window", args: `{"path":"@runs/3.log","start_line":4}`, exact: "   4\tline 4\n   5\tline 5\n[lines 4-5 of 5; end of file]\n"},
		{name: "run log leading zero", args: `{"path":"@runs/012.log"}`, exact: "   1\ttwelve\n"},
		{name: "run log missing", args: `{"path":"@runs/7.log"}`, code: agent.CodeNotFound,
			has: []string{"no saved output of run_test call 7", "@runs/3.log, @runs/9.log, @runs/12.log"}, hasNot: []string{"WORKSPACE FILE"}},
		{name: "run log symlink", args: `{"path":"@runs/5.log"}`, code: agent.CodeDenied, hasNot: []string{"TOP SECRET"}},
		{name: "run log too large", args: `{"path":"@runs/9.log"}`, code: agent.CodeInvalidArgument, has: []string{"over the 64 MiB limit"}},
		{name: "runs traversal", args: `{"path":"@runs/../outside/secret.txt"}`, code: agent.CodeDenied, hasNot: []string{"TOP SECRET"}},
		{name: "runs dotdot after log", args: `{"path":"@runs/1.log/.."}`, code: agent.CodeDenied},
		{name: "runs trailing slash", args: `{"path":"@runs/3.log/"}`, code: agent.CodeDenied},
		{name: "runs non digit", args: `{"path":"@runs/x.log"}`, code: agent.CodeDenied, has: []string{"@runs/N.log"}},
		{name: "runs negative", args: `{"path":"@runs/-1.log"}`, code: agent.CodeDenied},
		{name: "runs other ext", args: `{"path":"@runs/3.txt"}`, code: agent.CodeDenied},
		{name: "runs dir itself", args: `{"path":"@runs"}`, code: agent.CodeDenied},
		{name: "runs nested", args: `{"path":"@runs/3/3.log"}`, code: agent.CodeDenied},
		{name: "runs too many digits", args: `{"path":"@runs/1234567890.log"}`, code: agent.CodeDenied},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res, err := rf.Execute(context.Background(), json.RawMessage(c.args))
			if err != nil {
				t.Fatalf("Execute: Go error %v", err)
			}
			if c.code == "" && res.IsError {
				t.Fatalf("unexpected error result: %s", res.Text)
			}
			if c.code != "" && (!res.IsError || res.Code != c.code) {
				t.Fatalf("got code %q (error %v), want %q: %s", res.Code, res.IsError, c.code, res.Text)
			}
			text := res.Text
			if res.IsError {
				var e struct{ Message string }
				if err := json.Unmarshal([]byte(res.Text), &e); err != nil {
					t.Fatalf("error result is not JSON: %v", err)
				}
				text = e.Message
			}
			if c.exact != "" && text != c.exact {
				t.Errorf("text:\n%q\nwant:\n%q", text, c.exact)
			}
			for _, h := range c.has {
				if !strings.Contains(text, h) {
					t.Errorf("text lacks %q:\n%.2000s", h, text)
				}
			}
			for _, h := range c.hasNot {
				if strings.Contains(text, h) {
					t.Errorf("text contains %q:\n%.2000s", h, text)
				}
			}
			if c.maxSize > 0 && len(text) > c.maxSize {
				t.Errorf("answer is %d bytes, over %d", len(text), c.maxSize)
			}
			if !utf8.ValidString(text) {
				t.Errorf("answer is not valid UTF-8")
			}
		})
	}
}

// TestReadFileAnswerBoundContinues pages a file whose lines exceed the
// answer bound and checks that following the "next" hints visits every line
// exactly once.
func TestReadFileAnswerBoundContinues(t *testing.T) {
	t.Parallel()
	ws, _ := readFixture(t)
	rf := NewReadFile(ws)
	seen := 0
	start := 1
	for calls := 0; calls < 100; calls++ {
		res, err := rf.Execute(context.Background(), json.RawMessage(fmt.Sprintf(`{"path":"wide.txt","start_line":%d,"end_line":%d}`, start, start+1999)))
		if err != nil || res.IsError {
			t.Fatalf("Execute: %v %s", err, res.Text)
		}
		if len(res.Text) > readMaxAnswerBytes {
			t.Fatalf("answer %d bytes, over the bound", len(res.Text))
		}
		for _, line := range strings.Split(strings.TrimSuffix(res.Text, "\n"), "\n") {
			if strings.HasPrefix(line, "[") {
				continue
			}
			seen++
			var n int
			if _, err := fmt.Sscanf(strings.TrimSpace(line), "%d", &n); err != nil || n != seen {
				t.Fatalf("line %q: want number %d", line, seen)
			}
		}
		if strings.Contains(res.Text, "end of file") {
			break
		}
		var next int
		i := strings.Index(res.Text, "next: start_line=")
		if i < 0 {
			t.Fatalf("no next hint: %s", res.Text[len(res.Text)-200:])
		}
		fmt.Sscanf(res.Text[i:], "next: start_line=%d", &next)
		start = next
	}
	if seen != 2000 {
		t.Errorf("saw %d lines, want 2000", seen)
	}
}

// TestRenderFileLimit covers a file that grows past its cap after the
// size check: the streamed byte count catches it.
func TestRenderFileLimit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fxWrite(t, dir, map[string]string{"f.txt": numbered(50)})
	for _, c := range []struct {
		limit int64
		fail  bool
	}{{100, true}, {int64(len(numbered(50))), false}} {
		f, err := os.Open(filepath.Join(dir, "f.txt"))
		if err != nil {
			t.Fatal(err)
		}
		res, err := renderFile(context.Background(), f, "f.txt", lineWindow{start: 1, end: 400}, c.limit)
		f.Close()
		if err != nil || res.IsError != c.fail {
			t.Errorf("limit %d: %v %+v, want error result %v", c.limit, err, res, c.fail)
		}
	}
}

func TestReadFileCancelled(t *testing.T) {
	t.Parallel()
	ws, _ := readFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewReadFile(ws).Execute(ctx, json.RawMessage(`{"path":"small.txt"}`)); err == nil {
		t.Fatal("cancelled context: want a Go error")
	}
}

func TestReadFileSpec(t *testing.T) {
	t.Parallel()
	rf := NewReadFile(nil)
	spec := rf.Spec()
	var schema struct {
		Type       string                     `json:"type"`
		Required   []string                   `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(spec.InputSchema, &schema); err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	if spec.Name != "read_file" || rf.Mutates() || schema.Type != "object" || len(schema.Required) != 1 || schema.Required[0] != "path" {
		t.Errorf("spec = %+v, schema = %+v", spec, schema)
	}
	for _, p := range []string{"path", "start_line", "end_line"} {
		if _, ok := schema.Properties[p]; !ok {
			t.Errorf("schema lacks %q", p)
		}
	}
	var _ agent.Tool = rf
}
