package action

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/org/mini-agent/internal/config"
	"github.com/org/mini-agent/internal/exitcode"
	"github.com/org/mini-agent/internal/sandbox"
	"github.com/sethvargo/go-githubactions"
)

// inputNames are the action's inputs (action.yml). Each is read from
// INPUT_<NAME> with "-" as "_" (what a composite action's `env:` sets),
// then with "-" kept (what the runner sets for JavaScript and Docker actions).
var inputNames = []string{"github-token", "provider", "model", "base-url", "api-key", "test-command", "mode",
	"failure-log", "max-steps", "max-minutes", "max-cost-usd", "price-in", "price-out", "config", "script", "ci-wait-minutes",
	"test-network", "test-socket"}

// maxCIWaitMinutes bounds the ci-wait-minutes input.
const maxCIWaitMinutes = 60

// secretInputEnv are the environment names that may hold the token or the
// API key: scrubbed from the test command's environment and redacted.
var secretInputEnv = []string{"INPUT_GITHUB_TOKEN", "INPUT_GITHUB-TOKEN", "INPUT_API_KEY", "INPUT_API-KEY"}

// inputs are the action's inputs, checked.
type inputs struct {
	Token, Provider, Model, BaseURL, APIKey, TestCommand, Mode, FailureLog, Config, Script string
	MaxSteps, MaxMinutes                                                                   int
	// CIWaitMinutes bounds waiting for the CI run dispatched on a fix branch
	// (0: do not wait).
	CIWaitMinutes int
	MaxCostUSD    float64
	// PriceIn and PriceOut: USD per million tokens; nil when not given.
	PriceIn, PriceOut *float64
	// TestNetwork and TestSockets open the test command's sandbox
	// (test-network: loopback or open; test-socket: paths, one a line).
	TestNetwork sandbox.Network
	TestSockets []string
}

// readInputs reads and checks the inputs; a bad one is a usage error
// naming the input.
func readInputs(gha *githubactions.Action) (inputs, error) {
	values := make(map[string]string, len(inputNames))
	for _, name := range inputNames {
		v := gha.GetInput(strings.ReplaceAll(name, "-", "_"))
		if v == "" {
			v = gha.GetInput(name)
		}
		values[name] = v
	}
	get := func(name string) string { return values[name] }
	in := inputs{Token: get("github-token"), Provider: get("provider"), Model: get("model"), BaseURL: get("base-url"),
		APIKey: get("api-key"), TestCommand: get("test-command"), Mode: get("mode"), FailureLog: get("failure-log"),
		Config: get("config"), Script: get("script")}
	if in.Token == "" {
		in.Token = strings.TrimSpace(gha.Getenv("GITHUB_TOKEN"))
	}
	if in.Script == "" {
		in.Script = gha.Getenv("MINI_AGENT_SCRIPT")
	}
	// Mask before anything else is printed.
	for _, s := range []string{in.Token, in.APIKey} {
		if s != "" {
			gha.AddMask(s)
		}
	}
	var bad []string
	num := func(name string, dst *int) {
		if v := get(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				bad = append(bad, fmt.Sprintf("%s=%q is not a positive whole number", name, v))
			}
			*dst = n
		}
	}
	num("max-steps", &in.MaxSteps)
	num("max-minutes", &in.MaxMinutes)
	if in.MaxMinutes > config.MaxMinutes {
		bad = append(bad, fmt.Sprintf("max-minutes=%d is more than %d", in.MaxMinutes, config.MaxMinutes))
	}
	if v := get("ci-wait-minutes"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > maxCIWaitMinutes {
			bad = append(bad, fmt.Sprintf("ci-wait-minutes=%q is not a whole number from 0 to %d", v, maxCIWaitMinutes))
		}
		in.CIWaitMinutes = n
	}
	if v := get("max-cost-usd"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f > 0 && f <= 1e6) { // NaN fails both
			bad = append(bad, fmt.Sprintf("max-cost-usd=%q is not a positive amount", v))
		}
		in.MaxCostUSD = f
	}
	price := func(name string, dst **float64) {
		if v := get(name); v != "" {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || !(f >= 0 && f <= config.MaxPrice) {
				bad = append(bad, fmt.Sprintf("%s=%q is not a price in USD per million tokens", name, v))
			}
			*dst = &f
		}
	}
	price("price-in", &in.PriceIn)
	price("price-out", &in.PriceOut)
	if (in.PriceIn == nil) != (in.PriceOut == nil) {
		bad = append(bad, "price-in and price-out go together (USD per million input and output tokens)")
	}
	if n, err := sandbox.ParseNetwork(get("test-network")); err != nil {
		bad = append(bad, fmt.Sprintf("test-network=%q is not loopback or open", get("test-network")))
	} else {
		in.TestNetwork = n
	}
	for _, line := range strings.Split(get("test-socket"), "\n") {
		if p := strings.TrimSpace(line); p != "" {
			if !filepath.IsAbs(p) || filepath.Clean(p) != p {
				bad = append(bad, fmt.Sprintf("test-socket %q is not a clean absolute path", p))
			}
			in.TestSockets = append(in.TestSockets, p)
		}
	}
	switch strings.ToLower(in.Mode) {
	case "", "auto", "fix", "explain", "flaky":
	default:
		bad = append(bad, fmt.Sprintf("mode=%q is not auto, fix, explain or flaky", in.Mode))
	}
	switch strings.ToLower(in.Provider) {
	case "", "openai", "anthropic", "script":
	default:
		bad = append(bad, fmt.Sprintf("provider=%q is not openai, anthropic or script", in.Provider))
	}
	if len(bad) > 0 {
		return in, exitcode.Usagef("bad inputs: %s", strings.Join(bad, "; "))
	}
	return in, nil
}

// apiKeyGetenv answers the providers' key variables with the api-key input
// when it is set, and the environment otherwise.
func apiKeyGetenv(getenv func(string) string, apiKey string) func(string) string {
	return func(name string) string {
		if apiKey != "" && (name == "OPENAI_API_KEY" || name == "ANTHROPIC_API_KEY") {
			return apiKey
		}
		return getenv(name)
	}
}
