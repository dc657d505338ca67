package ghtest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
)

// Fault is a failure injected into the fake, as a flaky network or an
// overloaded GitHub would produce it. It applies to the requests of one host
// whose method and path match; from the Nth such request on, Times of them
// fail.
type Fault struct {
	// Host is "api" (the default) or "logs" (the log storage host).
	Host   string
	Method string
	// Path is the request path, e.g. "/repos/o/r/git/refs"; a trailing "*"
	// matches by prefix.
	Path string
	// Nth is the first matching request that fails, counting from 1 (0
	// means 1).
	Nth int
	// Times is how many consecutive matching requests fail: 0 means one, a
	// negative value every one from the Nth on.
	Times int

	// Status is the answer instead of the real one (with GitHub's JSON error
	// body on the API host, plain text on the log host).
	Status int
	// RetryAfter, when set, is sent as the Retry-After header with Status.
	RetryAfter string
	// Drop closes the connection without an answer (instead of Status).
	Drop bool
	// Cut serves the real answer's headers (its Content-Length included)
	// and only its first Cut bytes (always fewer than the whole body), then
	// closes the connection: a transfer reset mid-body.
	Cut int
	// Apply lets the fake perform the request (a write is stored) before
	// its answer is replaced by Status or dropped: a lost answer.
	Apply bool
	// Message, DocURL and Errors make the API host's answer GitHub's body
	// for a known refusal ({"message", "documentation_url", "status",
	// "errors"}); empty: the status text. Header adds response headers.
	Message string
	DocURL  string
	Errors  []map[string]any
	Header  map[string]string
}

type fault struct {
	Fault
	seen, fired int
}

// Inject adds f. Faults are checked in the order they were added; the first
// that fires on a request decides its fate.
func (s *Server) Inject(f Fault) {
	if f.Host == "" {
		f.Host = "api"
	}
	if f.Nth <= 0 {
		f.Nth = 1
	}
	if f.Times == 0 {
		f.Times = 1
	}
	if f.Status == 0 && !f.Drop && f.Cut <= 0 {
		panic("ghtest: a fault needs Status, Drop or Cut")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &fault{Fault: f})
}

// Fired returns how many requests the faults made fail so far.
func (s *Server) Fired() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, f := range s.faults {
		n += f.fired
	}
	return n
}

// faultFor counts r against the faults and returns the one that fires, if
// any; the caller holds s.mu.
func (s *Server) faultFor(host string, r *http.Request) *Fault {
	var hit *Fault
	for _, f := range s.faults {
		if f.Host != host || f.Method != r.Method || !matchPath(f.Path, r.URL.Path) {
			continue
		}
		f.seen++
		if hit == nil && f.seen >= f.Nth && (f.Times < 0 || f.seen < f.Nth+f.Times) {
			f.fired++
			c := f.Fault
			hit = &c
		}
	}
	return hit
}

func matchPath(pattern, p string) bool {
	if prefix, ok := strings.CutSuffix(pattern, "*"); ok {
		return strings.HasPrefix(p, prefix)
	}
	return pattern == p
}

// serveFault answers r as f says, h being the real handler.
func serveFault(w http.ResponseWriter, r *http.Request, f *Fault, host string, h http.Handler) {
	if f.Cut > 0 {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		var head strings.Builder
		fmt.Fprintf(&head, "HTTP/1.1 %d %s\r\n", rec.Code, http.StatusText(rec.Code))
		for k, vs := range rec.Header() {
			if k == "Content-Length" || k == "Connection" {
				continue
			}
			for _, v := range vs {
				fmt.Fprintf(&head, "%s: %s\r\n", k, v)
			}
		}
		fmt.Fprintf(&head, "Content-Length: %d\r\nConnection: close\r\n\r\n", len(body))
		hijackWrite(w, append([]byte(head.String()), body[:max(min(f.Cut, len(body)-1), 0)]...))
		return
	}
	if f.Apply {
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	if f.Drop {
		hijackWrite(w, nil)
		return
	}
	if f.RetryAfter != "" {
		w.Header().Set("Retry-After", f.RetryAfter)
	}
	if host == "api" {
		githubError(w, f.Status, cmpOr(f.Message, http.StatusText(f.Status)), f.DocURL, f.Errors, f.Header)
		return
	}
	http.Error(w, strconv.Itoa(f.Status)+" "+http.StatusText(f.Status), f.Status)
}

// hijackWrite writes raw bytes on the connection and closes it.
func hijackWrite(w http.ResponseWriter, raw []byte) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic("ghtest: cannot hijack the connection: " + err.Error())
	}
	defer conn.Close()
	if len(raw) > 0 {
		_, _ = buf.Write(raw)
		_ = buf.Flush()
	}
}
