package failure

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

const srcJUnit = "junit"

// isXML reports whether the buffered input starts like an XML document.
func isXML(br *bufio.Reader) bool {
	head, _ := br.Peek(512)
	head = bytes.TrimPrefix(head, []byte("\uFEFF"))
	head = bytes.TrimLeft(head, " \t\r\n")
	return bytes.HasPrefix(head, []byte("<?xml")) || bytes.HasPrefix(head, []byte("<testsuite"))
}

// junitCase is the testcase being read.
type junitCase struct {
	name, class, file, line string
	failed                  bool
	kind, message, typ      string
	text                    lines
}

// extractJUnit reads a JUnit XML report (testsuites/testsuite/testcase
// with failure or error children) with a streaming decoder.
func extractJUnit(r io.Reader, opt Options) (*FailureContext, error) {
	d := xml.NewDecoder(r)
	d.Strict = false
	d.CharsetReader = func(_ string, in io.Reader) (io.Reader, error) { return in, nil }
	col := newCollector()
	var suites []string
	var tc *junitCase
	inText := false
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("extract failure: junit: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "testsuite":
				if len(suites) < 64 {
					suites = append(suites, attr(t, "name"))
				}
			case "testcase":
				tc = &junitCase{name: attr(t, "name"), class: attr(t, "classname"),
					file: attr(t, "file"), line: attr(t, "line"), text: newLines(maxExcerptLines, maxExcerpt)}
			case "failure", "error":
				if tc != nil && !tc.failed {
					tc.failed, tc.kind = true, t.Name.Local
					tc.message, tc.typ = attr(t, "message"), attr(t, "type")
					inText = true
				}
			case "system-out", "system-err", "properties", "skipped":
				if err := d.Skip(); err != nil {
					return nil, fmt.Errorf("extract failure: junit: %w", err)
				}
			}
		case xml.CharData:
			if inText && tc != nil {
				for _, l := range strings.Split(strings.Trim(string(t), "\n"), "\n") {
					tc.text.add(l)
				}
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "failure", "error":
				inText = false
			case "testcase":
				if tc != nil && tc.failed {
					col.addFailure(srcJUnit, tc.failure(suites))
				}
				tc = nil
			case "testsuite":
				if len(suites) > 0 {
					suites = suites[:len(suites)-1]
				}
			}
		}
	}
	fc := &FailureContext{Failures: col.failures, BuildErrors: col.builds, Omitted: col.omitted,
		Source: strings.Join(col.sources, ","), Budget: budgetOf(opt)}
	newNormalizer(opt.Workspace).apply(fc)
	return fc, nil
}

func (c *junitCase) failure(suites []string) Failure {
	pkg := c.class
	if pkg == "" && len(suites) > 0 {
		pkg = suites[len(suites)-1]
	}
	text := strings.TrimSpace(c.text.String())
	msg := strings.TrimSpace(c.message)
	if msg == "" {
		msg, _, _ = strings.Cut(text, "\n")
	}
	if (strings.HasSuffix(c.typ, "Error") || strings.HasSuffix(c.typ, "Exception")) && !strings.HasPrefix(msg, c.typ) {
		msg = c.typ + ": " + msg
	}
	loc := ""
	if c.file != "" && allDigits(c.line) {
		loc = c.file + ":" + c.line
	} else {
		loc = firstLoc(text)
	}
	return Failure{ID: c.name, Package: pkg, Location: loc, Message: msg, Excerpt: text}
}

func attr(e xml.StartElement, name string) string {
	for _, a := range e.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}
