package flakyrun

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"strings"
)

// Bounds on what is kept of one test's output in one run.
const (
	maxTestLines   = 200
	maxMessageLine = 500
	maxRaceLines   = 40
	maxLogLine     = 1 << 20
)

// goEvent is one line of `go test -json` (cmd/test2json's TestEvent).
type goEvent struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// goOutcome is one execution of one test (or a package's outcome outside
// its tests: Test empty).
type goOutcome struct {
	Package, Test string
	Failed        bool
	Message, Race string
}

// goRun is what one go test -json run said.
type goRun struct {
	Outcomes []goOutcome
	// Seeds are the -test.shuffle seeds per package.
	Seeds map[string]string
}

var reSeed = regexp.MustCompile(`^-test\.shuffle (\d+)\s*$`)

// parseGoJSON reads a go test -json stream. Lines that are not events
// (a build error on stderr) are ignored. A package that failed with no
// failing test in this run gives a package outcome.
func parseGoJSON(r io.Reader) (*goRun, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	run := &goRun{Seeds: map[string]string{}}
	buf := map[[2]string][]string{} // (package, test) -> output lines since its last outcome
	failedIn := map[string]bool{}   // packages with a failing test
	pkgOut := map[string][]string{} // package output outside tests
	pending := map[[2]string]bool{} // tests started and not ended
	var order [][2]string           // pending's keys, first start first
	for {
		line, err := readLine(br)
		if len(line) > 0 && line[0] == '{' {
			var e goEvent
			if json.Unmarshal([]byte(line), &e) == nil && e.Package != "" {
				key := [2]string{e.Package, e.Test}
				switch e.Action {
				case "run":
					if _, ok := pending[key]; !ok {
						order = append(order, key)
					}
					pending[key] = true
				case "skip":
					delete(pending, key)
				case "output", "build-output":
					if e.Test == "" {
						if m := reSeed.FindStringSubmatch(e.Output); m != nil {
							run.Seeds[e.Package] = m[1]
						}
						pkgOut[e.Package] = keepLast(pkgOut[e.Package], e.Output)
					} else {
						buf[key] = keepLast(buf[key], e.Output)
					}
				case "pass", "fail":
					failed := e.Action == "fail"
					if e.Test == "" {
						if failed && !failedIn[e.Package] {
							msg, race := digest(pkgOut[e.Package])
							run.Outcomes = append(run.Outcomes, goOutcome{Package: e.Package, Failed: true, Message: msg, Race: race})
						} else if !failed {
							run.Outcomes = append(run.Outcomes, goOutcome{Package: e.Package})
						}
						delete(pkgOut, e.Package)
						continue
					}
					delete(pending, key)
					if failed {
						failedIn[e.Package] = true
					}
					msg, race := digest(buf[key])
					if !failed {
						msg = ""
					}
					run.Outcomes = append(run.Outcomes, goOutcome{Package: e.Package, Test: e.Test, Failed: failed, Message: msg, Race: race})
					delete(buf, key)
				}
			}
		}
		if errors.Is(err, io.EOF) {
			// A test that started and never ended: the run was killed (its
			// time limit) or the test binary exited under it. A failure.
			for _, k := range order {
				if pending[k] {
					msg, race := digest(buf[k])
					msg = strings.TrimSpace("the test never finished: the run was killed or its test binary exited\n" + msg)
					run.Outcomes = append(run.Outcomes, goOutcome{Package: k[0], Test: k[1], Failed: true, Message: msg, Race: race})
				}
			}
			return run, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// readLine reads one line, cutting lines longer than maxLogLine.
func readLine(br *bufio.Reader) (string, error) {
	var sb strings.Builder
	for {
		chunk, isPrefix, err := br.ReadLine()
		if sb.Len() < maxLogLine {
			sb.Write(chunk[:min(len(chunk), maxLogLine-sb.Len())])
		}
		if err != nil || !isPrefix {
			return sb.String(), err
		}
	}
}

func keepLast(lines []string, s string) []string {
	lines = append(lines, strings.TrimRight(s, "\n"))
	if len(lines) > maxTestLines {
		lines = lines[len(lines)-maxTestLines:]
	}
	return lines
}

// digest splits a test's output into its failure message (the lines it
// logged, without the runner's === and --- framing) and its race reports.
func digest(lines []string) (msg, race string) {
	var m, r []string
	inRace := false
	for _, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case t == "WARNING: DATA RACE":
			inRace = true
			if len(r) < maxRaceLines {
				r = append(r, t)
			}
			continue
		case inRace && strings.HasPrefix(t, "=================="):
			inRace = false
			continue
		case inRace:
			if len(r) < maxRaceLines {
				r = append(r, l)
			}
			continue
		case t == "", strings.HasPrefix(t, "=== "), strings.HasPrefix(t, "--- PASS"), strings.HasPrefix(t, "--- FAIL"),
			strings.HasPrefix(t, "--- SKIP"), strings.HasPrefix(t, "=================="), t == "FAIL", t == "PASS":
			continue
		}
		if len(t) > maxMessageLine {
			t = t[:maxMessageLine] + "…"
		}
		m = append(m, t)
	}
	if len(m) > 20 {
		m = m[len(m)-20:]
	}
	return strings.Join(m, "\n"), strings.Join(r, "\n")
}
