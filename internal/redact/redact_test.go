package redact

import (
	"encoding/base64"
	"strings"
	"testing"
)

func TestReplacesLongestFirst(t *testing.T) {
	t.Parallel()
	r := New([]string{"abcdefgh", "abcdefgh-longer-secret"})
	if got := r("x abcdefgh-longer-secret y abcdefgh"); got != "x *** y ***" {
		t.Fatalf("got %q", got)
	}
}

// actions/checkout keeps the token in .git/config as
// "AUTHORIZATION: basic base64(x-access-token:TOKEN)", which test code the
// model wrote can print: the redactor must catch the token base64-encoded
// at any alignment, in both alphabets.
func TestCatchesBase64EncodedSecrets(t *testing.T) {
	t.Parallel()
	const secret = "ghs_16C7e42F292c6912E7710c838347Ae178B4a"
	r := New([]string{secret})
	for _, prefix := range []string{"", "x", "x-access-token:", "ab", "abc"} {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding} {
			plain := prefix + secret + "\n"
			encoded := enc.EncodeToString([]byte(plain))
			got := r("AUTHORIZATION: basic " + encoded)
			if strings.Contains(got, encoded) {
				t.Errorf("prefix %q: base64 %q not redacted: %q", prefix, encoded, got)
			}
			// What is left must not decode back to the secret.
			for _, part := range strings.Split(strings.TrimPrefix(got, "AUTHORIZATION: basic "), "***") {
				if dec, err := enc.DecodeString(part); err == nil && strings.Contains(string(dec), secret[4:]) {
					t.Errorf("prefix %q: %q still decodes to the secret", prefix, part)
				}
			}
		}
	}
	if got := r("plain text with no secret"); got != "plain text with no secret" {
		t.Fatalf("changed unrelated text: %q", got)
	}
}

func TestMasksPartsOfACutSecret(t *testing.T) {
	t.Parallel()
	const secret = "ghp_0123456789abcdefghijABCDEFGHIJ0123"
	r := New([]string{secret})
	cut := "token = " + secret[:24] + " [... line cut: 900 bytes in all]"
	got := r(cut)
	for i := 0; i+FragmentLen <= len(secret); i++ {
		if strings.Contains(got, secret[i:i+FragmentLen]) {
			t.Fatalf("a %d-byte part of the secret survived: %q", FragmentLen, got)
		}
	}
	if r("x "+secret+" y") != "x *** y" {
		t.Fatalf("whole secret: %q", r("x "+secret+" y"))
	}
	if r("ordinary text 0123456789") != "ordinary text 0123456789" {
		t.Fatal("ordinary text changed")
	}
}

func TestKeepsPartsOfPathLikeSecrets(t *testing.T) {
	t.Parallel()
	r := New([]string{"/home/runner/work/_temp/secret-file-path"})
	if got := r("see /home/runner/work/repo/repo/cart.go:14"); got != "see /home/runner/work/repo/repo/cart.go:14" {
		t.Fatalf("path fragment masked: %q", got)
	}
}

// FromEnv takes the values of secret-named variables and the extra names,
// and leaves every other variable's value alone.
func TestFromEnv(t *testing.T) {
	t.Parallel()
	env := []string{"GITHUB_TOKEN=ghs_tokenvalue0123456789", "MY_PLAIN=plain-value-1234", "CUSTOM=custom-secret-5678", "HOME=/home/u"}
	r := FromEnv(env, []string{"CUSTOM"})
	in := "a ghs_tokenvalue0123456789 b custom-secret-5678 c plain-value-1234 /home/u"
	if got, want := r(in), "a *** b *** c plain-value-1234 /home/u"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if !r.Holds("x custom-secret-5678") || r.Holds("plain-value-1234") {
		t.Fatal("Holds disagrees with the replacer")
	}
	if got := FromEnv(nil, nil)("anything ghs_x"); got != "anything ghs_x" {
		t.Fatalf("no secrets: %q", got)
	}
}
