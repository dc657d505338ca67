package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestPublishUsage(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	if code := Main(t.Context(), []string{"publish"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "Usage: mini-agent publish") {
		t.Errorf("exit %d\n%s", code, errb.String())
	}
	if code := Main(t.Context(), []string{"action", "extra"}, &out, &errb); code != 2 {
		t.Errorf("action with arguments: exit %d", code)
	}
}
