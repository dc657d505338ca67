package provider

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/org/mini-agent/agent"
)

func TestNewSelectsProvider(t *testing.T) {
	t.Parallel()
	script := []byte(`{"message":"hi"}`)
	cases := []struct {
		name string
		cfg  Config
		want string // concrete type
	}{
		{"openai with key from env", Config{Provider: "openai", Getenv: envMap(map[string]string{"OPENAI_API_KEY": "k"})}, "*provider.OpenAI"},
		{"openai local server, no key", Config{Provider: "OpenAI", BaseURL: "http://localhost:11434/v1", Model: "llama3.1", Getenv: noEnv}, "*provider.OpenAI"},
		{"openai base url from env", Config{Provider: "openai", Model: "m", Getenv: envMap(map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:8080/v1"})}, "*provider.OpenAI"},
		{"anthropic", Config{Provider: " anthropic ", Getenv: envMap(map[string]string{"ANTHROPIC_API_KEY": "k"})}, "*provider.Anthropic"},
		{"script bytes", Config{Provider: "script", Script: script}, "*provider.Script"},
		{"script file", Config{Provider: "script", ScriptPath: filepath.Join("testdata", "script", "fix.jsonl")}, "*provider.Script"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			m, err := New(c.cfg)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if got := typeName(m); got != c.want {
				t.Errorf("New returned %s, want %s", got, c.want)
			}
		})
	}
}

func TestNewConfigErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no provider", Config{}, "no provider"},
		{"unknown provider", Config{Provider: "gemini"}, `unknown provider "gemini"`},
		{"openai without key", Config{Provider: "openai", Getenv: noEnv}, "OPENAI_API_KEY"},
		{"openai custom url without model", Config{Provider: "openai", BaseURL: "http://localhost:8000/v1", Getenv: noEnv}, "model name is required"},
		{"openai bad url", Config{Provider: "openai", BaseURL: "localhost:8000", Model: "m", Getenv: noEnv}, "not an http(s) url"},
		{"anthropic without key", Config{Provider: "anthropic", Getenv: noEnv}, "ANTHROPIC_API_KEY"},
		{"anthropic bad url", Config{Provider: "anthropic", APIKey: "k", BaseURL: "ftp://x", Getenv: noEnv}, "not an http(s) url"},
		{"script both", Config{Provider: "script", ScriptPath: "a", Script: []byte("b")}, "not both"},
		{"script none", Config{Provider: "script"}, "no script"},
		{"script missing file", Config{Provider: "script", ScriptPath: "testdata/nope.jsonl"}, "nope.jsonl"},
		{"script malformed", Config{Provider: "script", Script: []byte("{")}, "line 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			m, err := New(c.cfg)
			if err == nil {
				t.Fatalf("New returned %T, want an error", m)
			}
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want ErrConfig mentioning %q", err, c.want)
			}
		})
	}
}

// TestConfigKeyNotInErrors: a key pasted into the base URL by mistake is
// not echoed in the configuration error.
func TestConfigKeyNotInErrors(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"openai", "anthropic"} {
		_, err := New(Config{Provider: p, APIKey: canaryKey, Model: "m", BaseURL: canaryKey, Getenv: noEnv})
		if err == nil || strings.Contains(err.Error(), canaryKey) {
			t.Errorf("%s: err = %v", p, err)
		}
	}
}

// TestEnvironmentReachesTheWire: keys and base URLs from the injected
// environment are the ones used.
func TestEnvironmentReachesTheWire(t *testing.T) {
	t.Parallel()
	for _, h := range harnesses {
		t.Run(h.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeAPI(t, reply{fixture: h.ok})
			env := map[string]string{
				"OPENAI_API_KEY": canaryKey, "OPENAI_BASE_URL": f.srv.URL + "/v1",
				"ANTHROPIC_API_KEY": canaryKey, "ANTHROPIC_BASE_URL": f.srv.URL,
			}
			m, err := New(Config{Provider: h.name, Model: "m", Getenv: envMap(env)})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := m.Sample(t.Context(), sampleRequest()); err != nil {
				t.Fatalf("Sample: %v", err)
			}
			r := f.requests()[0]
			if r.path != h.path || sentKey(r.header) != canaryKey {
				t.Errorf("request to %s with key %q", r.path, sentKey(r.header))
			}
		})
	}
}

func typeName(m agent.Model) string {
	switch m.(type) {
	case *OpenAI:
		return "*provider.OpenAI"
	case *Anthropic:
		return "*provider.Anthropic"
	case *Script:
		return "*provider.Script"
	}
	return "unknown"
}
