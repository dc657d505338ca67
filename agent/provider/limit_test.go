package provider

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// oversizedServer answers every request with a well-formed response of the
// provider's wire format whose one string field holds size bytes, streamed
// without holding them in memory. It counts requests.
func oversizedServer(t *testing.T, prefix, suffix string, size int64, declareLength bool) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	chunk := bytes.Repeat([]byte("a"), 64<<10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		if declareLength {
			w.Header().Set("Content-Length", strconv.FormatInt(int64(len(prefix))+size+int64(len(suffix)), 10))
		}
		if _, err := io.WriteString(w, prefix); err != nil {
			return
		}
		for left := size; left > 0; left -= int64(len(chunk)) {
			if _, err := w.Write(chunk[:min(left, int64(len(chunk)))]); err != nil {
				return // the client hung up, as it should
			}
		}
		_, _ = io.WriteString(w, suffix)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// A hostile --base-url endpoint sending a 128 MiB answer costs the adapter
// at most a few times MaxResponseBytes, and the call fails at once with
// ErrResponseTooLarge, not retried. Not parallel: it measures the
// process's allocations.
func TestOversizedResponseIsRefusedWithBoundedMemory(t *testing.T) {
	const size = 8 * MaxResponseBytes
	providers := []struct {
		name, prefix, suffix string
		sample               func(t *testing.T, url string) error
	}{
		{
			name:   "openai",
			prefix: `{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"apply_patch","arguments":"`,
			suffix: `"}}]}}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`,
			sample: func(t *testing.T, url string) error {
				m, err := NewOpenAI(Config{BaseURL: url + "/v1", Model: "m", APIKey: canaryKey, Getenv: noEnv})
				if err != nil {
					t.Fatal(err)
				}
				_, err = m.Sample(t.Context(), sampleRequest())
				return err
			},
		},
		{
			name:   "anthropic",
			prefix: `{"id":"msg_1","type":"message","role":"assistant","model":"m","stop_reason":"end_turn","stop_sequence":null,"content":[{"type":"text","text":"`,
			suffix: `"}],"usage":{"input_tokens":1,"output_tokens":1}}`,
			sample: func(t *testing.T, url string) error {
				m, err := NewAnthropic(Config{BaseURL: url, APIKey: canaryKey, Getenv: noEnv})
				if err != nil {
					t.Fatal(err)
				}
				_, err = m.Sample(t.Context(), sampleRequest())
				return err
			},
		},
	}
	for _, p := range providers {
		for _, declared := range []bool{false, true} {
			t.Run(p.name+"/content-length="+strconv.FormatBool(declared), func(t *testing.T) {
				srv, hits := oversizedServer(t, p.prefix, p.suffix, size, declared)
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				err := p.sample(t, srv.URL)
				runtime.ReadMemStats(&after)
				if !errors.Is(err, ErrResponseTooLarge) {
					t.Fatalf("Sample error %v, want ErrResponseTooLarge", err)
				}
				if !strings.Contains(err.Error(), strconv.Itoa(MaxResponseBytes)) {
					t.Errorf("error %q does not state the limit", err)
				}
				if n := hits.Load(); n != 1 {
					t.Errorf("server saw %d requests, want 1 (not retried)", n)
				}
				alloc := after.TotalAlloc - before.TotalAlloc
				t.Logf("allocated %d MiB for a %d MiB body", alloc>>20, size>>20)
				if limit := uint64(3 * MaxResponseBytes); alloc > limit && !raceEnabled {
					t.Errorf("allocated %d bytes reading a %d-byte answer, want at most %d", alloc, size, limit)
				}
			})
		}
	}
}

func TestCappedBody(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		size    int
		wantErr bool
	}{{0, false}, {99, false}, {100, false}, {101, true}, {5000, true}} {
		res := &http.Response{Body: io.NopCloser(bytes.NewReader(bytes.Repeat([]byte("x"), c.size))), ContentLength: -1}
		res, _ = capResponse(100)(nil, func(*http.Request) (*http.Response, error) { return res, nil })
		got, err := io.ReadAll(res.Body)
		if c.wantErr != errors.Is(err, ErrResponseTooLarge) || len(got) > 100 {
			t.Errorf("size %d: read %d bytes, err %v; want error %v and at most 100 bytes", c.size, len(got), err, c.wantErr)
		}
		if !c.wantErr && len(got) != c.size {
			t.Errorf("size %d: read %d bytes", c.size, len(got))
		}
	}
}
