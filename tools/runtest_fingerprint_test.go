package tools

import (
	"context"
	"testing"
)

func TestRunTestFingerprintIgnoresTimingsNotOutcomes(t *testing.T) {
	if testing.Short() {
		t.Skip("slow end-to-end test; run without -short (scripts/test.sh does)")
	}
	t.Parallel()
	ws := copyFixture(t, "run_gomod")
	rt := NewRunTest(ws, RunTestConfig{Command: mustParse(t, "go test ./a/...")})
	first, err := rt.Execute(context.Background(), []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	second, err := rt.Execute(context.Background(), []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if first.Text == second.Text {
		t.Fatal("expected the raw answers to differ (run number, duration)")
	}
	if rt.Fingerprint(first.Text) != rt.Fingerprint(second.Text) {
		t.Fatalf("same outcome, different fingerprints:\n%s\n---\n%s", rt.Fingerprint(first.Text), rt.Fingerprint(second.Text))
	}
	a := "--- FAIL: TestTotal (0.00s)\n    cart_test.go:8: Total(items, 0) = 1200, want 1500\nduration: 277ms\n"
	b := "--- FAIL: TestTotal (0.01s)\n    cart_test.go:8: Total(items, 0) = 1350, want 1500\nduration: 301ms\n"
	if rt.Fingerprint(a) == rt.Fingerprint(b) {
		t.Fatal("a changed assertion value must change the fingerprint")
	}
}
