package proc

import (
	"slices"
	"strings"
	"testing"
)

func TestIsSecretName(t *testing.T) {
	t.Parallel()
	extra := []string{"MY_CONF", "corp_*"}
	tests := []struct {
		name string
		want bool
	}{
		{"GITHUB_TOKEN", true},
		{"github_token", true},
		{"ACTIONS_RUNTIME_TOKEN", true},
		{"ACTIONS_ID_TOKEN_REQUEST_URL", true},
		{"ACTIONS_ID_TOKEN_REQUEST_TOKEN", true},
		{"OPENAI_API_KEY", true},
		{"ANTHROPIC_API_KEY", true},
		{"NPM_TOKEN", true},
		{"FOO_SECRET", true},
		{"db_password", true},
		{"MY_API_KEY", true},
		{"SSH_KEY", true},
		{"MY_CONF", true},
		{"my_conf", true},
		{"CORP_ANYTHING", true},
		{"PATH", false},
		{"HOME", false},
		{"GOFLAGS", false},
		{"KEYBOARD", false},
		{"MY_CONF_X", false},
		{"CI", false},
	}
	for _, tt := range tests {
		if got := IsSecretName(tt.name, extra); got != tt.want {
			t.Errorf("IsSecretName(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestScrubEnvAndSecretValues(t *testing.T) {
	t.Parallel()
	env := []string{
		"PATH=/usr/bin",
		"GITHUB_TOKEN=ghs_canary_1234567890",
		"HOME=/home/x",
		"MY_API_KEY=short",
		"FOO_SECRET=canary-foo-secret",
		"EXTRA_NAME=canary-extra-value",
		"GH_TOKEN=ghs_canary_1234567890",
		"=C:=C:\\dir",
		"NOEQUALS",
	}
	got := ScrubEnv(env, []string{"EXTRA_NAME"})
	want := []string{"PATH=/usr/bin", "HOME=/home/x", "=C:=C:\\dir", "NOEQUALS"}
	if !slices.Equal(got, want) {
		t.Fatalf("ScrubEnv = %q, want %q", got, want)
	}
	vals := SecretValues(env, []string{"EXTRA_NAME"})
	wantVals := []string{"ghs_canary_1234567890", "canary-extra-value", "canary-foo-secret"}
	if !slices.Equal(vals, wantVals) {
		t.Fatalf("SecretValues = %q, want %q", vals, wantVals)
	}
}

// The runner's command files let a step set the environment, PATH and
// outputs of the steps after it: code under test must not be handed them.
func TestScrubEnvDropsRunnerCommandFiles(t *testing.T) {
	t.Parallel()
	env := []string{"GITHUB_ENV=/r/_temp/set_env_1", "GITHUB_PATH=/r/_temp/add_path_1", "GITHUB_OUTPUT=/r/_temp/set_output_1",
		"GITHUB_STATE=/r/_temp/save_state_1", "GITHUB_STEP_SUMMARY=/r/_temp/step_summary_1", "GITHUB_WORKSPACE=/w", "PATH=/bin"}
	got := ScrubEnv(env, nil)
	want := []string{"GITHUB_WORKSPACE=/w", "PATH=/bin"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("ScrubEnv = %q, want %q", got, want)
	}
	if v := SecretValues(env, nil); len(v) != 0 {
		t.Fatalf("command file paths are not secrets to redact: %q", v)
	}
}

// The test command's environment is an allow-list: a credential under a
// name the deny-list does not know (AWS_ACCESS_KEY_ID, DATABASE_URL) is
// gone too, and an allowed prefix does not let a secret-looking name through.
func TestAllowEnv(t *testing.T) {
	env := []string{
		"PATH=/usr/bin", "HOME=/home/u", "LC_ALL=C", "GOFLAGS=-mod=mod", "CGO_ENABLED=0",
		"npm_config_cache=/c", "PYTHONPATH=/p", "CARGO_HOME=/cargo", "CI=true", "RUNNER_OS=Linux",
		"GITHUB_TOKEN=ghp_canary0000000000", "OPENAI_API_KEY=sk-canary000000",
		"AWS_ACCESS_KEY_ID=AKIACANARY", "DATABASE_URL=postgres://u:canary@h/db", "SOME_VAR=canary",
		"GOPROXY_TOKEN=canary-token", "npm_config__auth=canary", "npm_config__authToken=canary",
		"GITHUB_ENV=/runner/env", "ACTIONS_RUNTIME_TOKEN=canary", "MY_TOOL_HOME=/t", "EXTRA_SETTING=1",
		"CARGO_REGISTRY_TOKEN=canary", "noequals",
	}
	got := AllowEnv(env, []string{"MY_TOOL_*", "extra_setting"}, nil)
	want := []string{"PATH=/usr/bin", "HOME=/home/u", "LC_ALL=C", "GOFLAGS=-mod=mod", "CGO_ENABLED=0",
		"npm_config_cache=/c", "PYTHONPATH=/p", "CARGO_HOME=/cargo", "CI=true", "RUNNER_OS=Linux",
		"MY_TOOL_HOME=/t", "EXTRA_SETTING=1"}
	if !slices.Equal(got, want) {
		t.Fatalf("AllowEnv =\n%q\nwant\n%q", got, want)
	}
	for _, kv := range got {
		if strings.Contains(kv, "canary") {
			t.Errorf("canary passed: %s", kv)
		}
	}
	// The deny-list's extra names apply on top of the allow-list.
	if got := AllowEnv([]string{"GOPRIVATE_X=1", "LANG=C"}, nil, []string{"GOPRIVATE_X"}); !slices.Equal(got, []string{"LANG=C"}) {
		t.Fatalf("extra secret name kept: %q", got)
	}
}
