package redact

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// Fake tokens in each issued format, built at run time so that the
// source holds none whole.
var (
	fakeGitHub     = "ghs_" + "16C7e42F292c6912E7710c838347Ae178B4a"
	fakeFineGrain  = "github_pat_" + "11ABCDEFG0123456789abc_defGHIJKLmnopqrstuvWXYZ0123456789abcdefghijKLMNOPqrstuvwx"
	fakeAnthropic  = "sk-ant-" + "api03-AbCdEf0123456789_ghIJkl-mnOPqr0123456789stUVwx"
	fakeOpenAI     = "sk-" + "proj-AbCdEfGh0123456789IjKlMnOp_qrstuv-WXYZ"
	fakeOpenAIOld  = "sk-" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGhIjKl"
	fakeAWS        = "AKIA" + "IOSFODNN7EXAMPLE"
	fakeAWSTemp    = "ASIA" + "Y34FZKBOKMUTVV7A"
	fakeSlack      = "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
	fakeGoogle     = "AIza" + "SyD-0123456789abcdefghijABCDEFGHIJ_"
	fakeBasicCreds = "eC1hY2Nlc3MtdG9rZW46Z2hzX0Fub3RoZXJUb2tlbjAxMjM0NTY3ODk="
)

func TestPatternsMaskEachIssuedFormat(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, text, want string
	}{
		{"github", "token: " + fakeGitHub + ".", "token: ghs_***."},
		{"github in a URL", "https://x-access-token:" + fakeGitHub + "@github.com/o/r", "https://x-access-token:ghs_***@github.com/o/r"},
		{"github classic", "GH_TOKEN=ghp_" + fakeGitHub[4:], "GH_TOKEN=ghp_***"},
		{"github fine-grained", "export T=" + fakeFineGrain, "export T=github_pat_***"},
		{"anthropic", "x-api-key: " + fakeAnthropic, "x-api-key: sk-ant-***"},
		{"openai project", `"key": "` + fakeOpenAI + `"`, `"key": "sk-proj-***"`},
		{"openai legacy", "OPENAI_API_KEY=" + fakeOpenAIOld, "OPENAI_API_KEY=sk-***"},
		{"openai glued to a word that ends in sk", "risk-" + fakeOpenAI, "risk-sk-proj-***"},
		{"aws", "aws_access_key_id = " + fakeAWS, "aws_access_key_id = AKIA***"},
		{"aws temporary", "[" + fakeAWSTemp + "]", "[ASIA***]"},
		{"slack", "SLACK=" + fakeSlack, "SLACK=xoxb-***"},
		{"google", "key=" + fakeGoogle + "&q=1", "key=AIza***&q=1"},
		{"authorization basic", "extraheader = AUTHORIZATION: basic " + fakeBasicCreds, "extraheader = AUTHORIZATION: basic ***"},
		{"authorization bearer", "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig_Abc123", "Authorization: Bearer ***"},
		{"authorization token", `curl -H "authorization: token 0123456789abcdef0123"`, `curl -H "authorization: token ***"`},
		{"authorization in JSON", `{"Authorization": "Bearer AbCdEf0123456789"}`, `{"Authorization": "Bearer ***"}`},
		{"private key", "a\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\nz",
			"a\n-----BEGIN OPENSSH PRIVATE KEY-----***\nz"},
		{"private key cut", "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA0123", "-----BEGIN RSA PRIVATE KEY-----***"},
		{"after a JSON newline escape", `{"patch":"+x\n` + fakeGitHub + `\n"}`, `{"patch":"+x\nghs_***\n"}`},
		{"after a JSON unicode escape", `"\u0026` + fakeGitHub + `"`, `"\u0026ghs_***"`},
		{"two in a row", fakeAWS + " " + fakeGitHub, "AKIA*** ghs_***"},
	} {
		if got := Patterns(c.text); got != c.want {
			t.Errorf("%s: Patterns(%q) = %q, want %q", c.name, c.text, got, c.want)
		}
	}
}

// Ordinary text that starts like a token stays as it is.
func TestPatternsLeaveLookalikesAlone(t *testing.T) {
	t.Parallel()
	for _, text := range []string{
		"pip install sk-learn",                          // too short
		"uses sk-learn-compatible-estimator-wrappers",   // one case, a kebab-case word
		"the task-0123456789abcdefABCDEFghij is queued", // "sk-" inside a word
		"ghp_short",
		"ghp_placeholder_for_the_docs_page_of_the_project", // snake_case, lower only
		"weighs_0123456789abcdefABCDEF0123456789abcdef",    // ghs_ inside a word
		"commit 9fceb02d0ae598e95dc970b74767f19372d61af8",  // a git sha
		"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"AKIAIOSFODNN7EXAMPLEXTRA",             // longer than a key id
		"Authorization: Bearer <token>",        // a placeholder
		"Authorization: Bearer YOUR_API_TOKEN", // one case
		"see https://github.com/org/mini-agent/issues/12",
		"-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
		"uuid 123e4567-e89b-12d3-a456-426614174000",
		"AIzaTooShort0123",
	} {
		if got := Patterns(text); got != text {
			t.Errorf("Patterns(%q) = %q: ordinary text changed", text, got)
		}
	}
}

// Every Func masks the patterns after the known values; Values masks the
// known values only; Holds reports what the Func masks.
func TestFuncsApplyPatterns(t *testing.T) {
	t.Parallel()
	known := "custom-secret-5678"
	r, v := New([]string{known}), Values([]string{known})
	text := "a " + known + " b " + fakeGitHub
	if got, want := r(text), "a *** b ghs_***"; got != want {
		t.Fatalf("New: %q, want %q", got, want)
	}
	if got, want := v(text), "a *** b "+fakeGitHub; got != want {
		t.Fatalf("Values: %q, want %q", got, want)
	}
	if got := New(nil)(fakeAnthropic); got != "sk-ant-***" {
		t.Fatalf("New(nil) left a token: %q", got)
	}
	if !r.Holds(fakeGitHub) || v.Holds(fakeGitHub) || !v.Holds(known) {
		t.Fatal("Holds disagrees with the replacers")
	}
	if got := FromEnv(nil, nil)("x " + fakeAWS); got != "x AKIA***" {
		t.Fatalf("FromEnv without secrets: %q", got)
	}
}

// A known token is masked whole (***), not by its pattern.
func TestKnownValuesBeforePatterns(t *testing.T) {
	t.Parallel()
	if got := New([]string{fakeGitHub})("t=" + fakeGitHub); got != "t=***" {
		t.Fatalf("got %q", got)
	}
}

// Masking never breaks JSON: the redactor runs on raw tool arguments.
func TestPatternsKeepJSONValid(t *testing.T) {
	t.Parallel()
	raw, _ := json.Marshal(map[string]string{"a": fakeGitHub + "\n" + fakeOpenAI, "b": "Authorization: Basic " + fakeBasicCreds,
		"c": "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----"})
	got := Patterns(string(raw))
	if !json.Valid([]byte(got)) || strings.Contains(got, fakeGitHub[4:]) || strings.Contains(got, fakeBasicCreds) {
		t.Fatalf("got %s", got)
	}
}

func TestTokensAreTheIssuedFormatsOnly(t *testing.T) {
	t.Parallel()
	text := "a " + fakeGitHub + " b " + fakeAWS + " Authorization: Basic " + fakeBasicCreds + " -----BEGIN PRIVATE KEY-----x"
	got := Tokens(text)
	if want := []string{fakeGitHub, fakeAWS}; !slices.Equal(got, want) {
		t.Fatalf("Tokens = %q, want %q", got, want)
	}
	if got := Tokens("sk-learn and a sha 9fceb02d0ae598e95dc970b74767f19372d61af8"); len(got) != 0 {
		t.Fatalf("Tokens of ordinary text = %q", got)
	}
}

// A text of many near-matches is still redacted in linear time.
func TestPatternsStayLinear(t *testing.T) {
	t.Parallel()
	text := strings.Repeat("sk-", 200_000) + strings.Repeat("xghp_", 50_000) + "Authorization: Basic " + strings.Repeat("a", 100_000)
	if got := Patterns(text); got != text {
		t.Fatal("changed")
	}
}
