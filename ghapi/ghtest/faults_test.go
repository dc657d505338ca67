package ghtest_test

import (
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/org/mini-agent/ghapi/ghtest"
)

// raw sends one request to the fake with a fresh connection, the token set.
func raw(t *testing.T, method, url, body string) (int, string, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

func TestInjectNthAndTimes(t *testing.T) {
	t.Parallel()
	s := ghtest.NewServer(t, token)
	s.AddRepo("octo/app", "main", map[string]string{"a": "a\n"})
	s.Inject(ghtest.Fault{Method: "GET", Path: "/repos/octo/*", Nth: 2, Times: 2, Status: 503, RetryAfter: "3"})
	var got []int
	for range 5 {
		code, _, err := raw(t, "GET", s.URL+"repos/octo/app", "")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, code)
	}
	if want := []int{200, 503, 503, 200, 200}; !slices.Equal(got, want) {
		t.Errorf("statuses = %v, want %v", got, want)
	}
	if s.Fired() != 2 {
		t.Errorf("fired %d", s.Fired())
	}
}

func TestInjectApplyStoresTheWriteAndLosesTheAnswer(t *testing.T) {
	t.Parallel()
	s := ghtest.NewServer(t, token)
	head := s.AddRepo("octo/app", "main", map[string]string{"a": "a\n"})
	s.Inject(ghtest.Fault{Method: "POST", Path: "/repos/octo/app/git/refs", Status: 502, Apply: true})
	code, body, err := raw(t, "POST", s.URL+"repos/octo/app/git/refs", `{"ref":"refs/heads/x","sha":"`+head+`"}`)
	if err != nil || code != 502 {
		t.Fatalf("answer %d %q, %v; want 502", code, body, err)
	}
	if s.Head("octo/app", "x") != head {
		t.Fatal("the write was not stored")
	}
	code, body, _ = raw(t, "POST", s.URL+"repos/octo/app/git/refs", `{"ref":"refs/heads/x","sha":"`+head+`"}`)
	if code != 422 || !strings.Contains(body, "Reference already exists") {
		t.Errorf("retry answered %d %s", code, body)
	}
}

func TestInjectDropAndCut(t *testing.T) {
	t.Parallel()
	s := ghtest.NewServer(t, token)
	s.AddRepo("octo/app", "main", map[string]string{"a": "a\n"})
	s.Inject(ghtest.Fault{Method: "GET", Path: "/repos/octo/app", Drop: true})
	s.Inject(ghtest.Fault{Method: "GET", Path: "/repos/octo/app", Nth: 2, Cut: 10})
	if _, _, err := raw(t, "GET", s.URL+"repos/octo/app", ""); err == nil {
		t.Error("a dropped connection gave no error")
	}
	code, body, err := raw(t, "GET", s.URL+"repos/octo/app", "")
	if code != 200 || len(body) != 10 || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("cut answer: %d, %d bytes, %v; want 200, 10 bytes, unexpected EOF", code, len(body), err)
	}
	if code, _, err := raw(t, "GET", s.URL+"repos/octo/app", ""); code != 200 || err != nil {
		t.Errorf("third request: %d %v", code, err)
	}
}
