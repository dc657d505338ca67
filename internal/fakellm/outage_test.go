package fakellm

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestOutageAnswersEveryRequest503: each Chat Completions request gets the
// OpenAI error shape with status 503 and a short retry-after, and is
// counted.
func TestOutageAnswersEveryRequest503(t *testing.T) {
	t.Parallel()
	o := NewOutage()
	defer o.Close()
	for i := range 3 {
		resp, err := http.Post(o.BaseURL()+"/chat/completions", "application/json", strings.NewReader(`{"model":"m"}`))
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		var e struct {
			Error struct{ Message, Type string }
		}
		if err := json.Unmarshal(body, &e); err != nil {
			t.Fatalf("body %q: %v", body, err)
		}
		if resp.StatusCode != http.StatusServiceUnavailable || e.Error.Message != OutageMessage || e.Error.Type != "server_error" ||
			resp.Header.Get("retry-after-ms") != "1" || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("request %d: status %d, headers %v, body %s", i, resp.StatusCode, resp.Header, body)
		}
		if got := o.Requests(); got != i+1 {
			t.Errorf("after %d requests Requests() = %d", i+1, got)
		}
	}
}
