package failure

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// checkEventDecode: when the decoder reads s, json.Unmarshal must accept s
// and give the same event.
func checkEventDecode(t *testing.T, d *eventDecoder, s string) bool {
	t.Helper()
	var got goEvent
	if !d.decode(s, &got) {
		return false
	}
	var want goEvent
	if err := json.Unmarshal([]byte(s), &want); err != nil {
		t.Fatalf("decoded %q, which json.Unmarshal refuses: %v", s, err)
	}
	if got != want {
		t.Fatalf("decode(%q) = %+v, json.Unmarshal gives %+v", s, got, want)
	}
	return true
}

// TestEventDecoderCorpus: every event line of the corpus is read by the
// decoder itself (none is left to encoding/json) and equals
// json.Unmarshal's reading; lines of other shapes are left to it.
func TestEventDecoderCorpus(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/corpus/*.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatal(files, err)
	}
	var d eventDecoder
	n := 0
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if !checkEventDecode(t, &d, sc.Text()) {
				t.Errorf("%s: left to encoding/json: %q", file, sc.Text())
			}
			n++
		}
		f.Close()
	}
	if n < 300 {
		t.Fatalf("only %d event lines", n)
	}
	for _, s := range []string{
		`{"action":"fail","Package":"p"}`,       // json.Unmarshal ignores case
		`{"Action":"fail","Package":"p"} `,      // trailing space
		`{"Action": "fail"}`,                    // space
		`{"Action":"fail","Test":null}`,         // null
		`{"Action":"fail","Elapsed":01}`,        // bad number
		`{"Action":"fail","Elapsed":1.}`,        // bad number
		`{"Action":"\ud83d\ude00"}`,             // surrogates
		`{"Action":"a\qb"}`,                     // bad escape
		"{\"Action\":\"a\tb\"}",                 // control byte
		"{\"Action\":\"a\xffb\"}",               // invalid UTF-8
		`{"Action":"fail","Extra":{"a":1}}`,     // object value
		`{"Action":"fail","Test":1}`,            // number for a string
		`{"Action":"fail",}`,                    // trailing comma
		`{"Act\u0069on":"fail"}`,                // escaped key
		`{"Action":"fail"}{"Action":"pass"}`,    // two values
		`{"Action":"fail","Output":"x\u00e9\n"`, // cut
	} {
		if checkEventDecode(t, &d, s) {
			t.Errorf("decoded %q, which should be left to encoding/json", s)
		}
	}
	for _, s := range []string{`{"Action":"output","Output":"a\"b\\c\/d\n\t\r\b\f\u00e9\u20ac"}`,
		`{"Action":"pass","Package":"p","Elapsed":-0.5e+3,"OutputType":"frame"}`, `{}`,
		`{"Action":"run","Action":"fail"}`} {
		if !checkEventDecode(t, &d, s) {
			t.Errorf("left %q to encoding/json", s)
		}
	}
}

// FuzzEventDecoder: whatever the decoder reads, json.Unmarshal reads the
// same way.
func FuzzEventDecoder(f *testing.F) {
	f.Add(`{"Time":"2024-05-01T12:00:00Z","Action":"output","Package":"p","Test":"TestA","Output":"--- FAIL: TestA (0.00s)\n"}`)
	f.Add(`{"Action":"pass","Package":"p","Elapsed":0.01}`)
	f.Add(`{"Action":"output","Output":"\u00e9\"\\\/"}`)
	f.Add(`{"ImportPath":"p [p.test]","Action":"build-fail","FailedBuild":"x"}`)
	f.Fuzz(func(t *testing.T, s string) {
		var d eventDecoder
		checkEventDecode(t, &d, s)
	})
}
