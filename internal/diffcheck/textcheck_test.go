package diffcheck

import (
	"slices"
	"strings"
	"testing"
)

const pyBase = `import time

import pytest


def test_counter():
    c = make()
    assert c.value == 1
    assert c.ok


def helper():
    return 1
`

const jsBase = `const { make } = require('./counter');

test('counts once', () => {
  const c = make();
  expect(c.value).toBe(1);
});

it('resets', async () => {
  const c = make();
  c.reset();
  expect(c.value).toBe(0);
});
`

func TestTextChecks(t *testing.T) {
	t.Parallel()
	py := func(s string) map[string]string { return one("tests/test_counter.py", s) }
	js := func(s string) map[string]string { return one("counter.test.js", s) }
	tests := []struct {
		name          string
		before, after map[string]string
		want          []string
	}{
		{"pytest-flaky-marker", py(pyBase), py(strings.Replace(pyBase, "def test_counter", "@pytest.mark.flaky(reruns=3)\ndef test_counter", 1)),
			[]string{PytestFlakyMarker}},
		{"pytest-flaky-marker: reruns in pytest.ini", map[string]string{"pytest.ini": "[pytest]\naddopts = -q\n"}, map[string]string{"pytest.ini": "[pytest]\naddopts = -q --reruns 3\n"},
			[]string{NonTestEdit, PytestFlakyMarker}},
		{"near miss: a test about a flaky detector", py(pyBase), py(pyBase + "\n\ndef test_flaky_detector():\n    assert detect() == []\n"),
			nil},
		{"new-sleep: python", py(pyBase), py(strings.Replace(pyBase, "    c = make()\n", "    c = make()\n    time.sleep(0.5)\n", 1)),
			[]string{NewSleep}},
		{"near miss: a commented sleep", py(pyBase), py(strings.Replace(pyBase, "    c = make()\n", "    c = make()\n    # time.sleep(0.5) used to be here\n", 1)),
			nil},
		{"new-skip: python", py(pyBase), py(strings.Replace(pyBase, "def test_counter", "@pytest.mark.skip(reason=\"flaky\")\ndef test_counter", 1)),
			[]string{NewSkip}},
		{"near miss: a variable named skipped", py(pyBase), py(strings.Replace(pyBase, "    c = make()\n", "    c = make()\n    skipped = []\n", 1)),
			nil},
		{"retry-loop: python", py(pyBase), py(strings.Replace(pyBase, "    c = make()\n    assert c.value == 1\n", "    for attempt in range(3):\n        c = make()\n        if c.value == 1:\n            break\n    assert c.value == 1\n", 1)),
			[]string{RetryLoop}},
		{"near miss: a loop over cases", py(pyBase), py(strings.Replace(pyBase, "    assert c.ok\n", "    assert c.ok\n    for case in CASES:\n        assert case\n", 1)),
			nil},
		{"timeout-only: pytest timeout", py("@pytest.mark.timeout(5)\n" + pyBase), py("@pytest.mark.timeout(30)\n" + pyBase),
			[]string{TimeoutOnly}},
		{"deleted-test: python", py(pyBase + "\n\ndef test_other():\n    assert True\n"), py(pyBase),
			[]string{DeletedTest, FewerAssertions}},
		{"renamed-test: python", py(pyBase), py(strings.Replace(pyBase, "def test_counter", "def test_counter_stable", 1)),
			[]string{RenamedTest}},
		{"fewer-assertions: python", py(pyBase), py(strings.Replace(pyBase, "    assert c.ok\n", "", 1)),
			[]string{FewerAssertions}},
		{"near miss: a renamed python helper", py(pyBase), py(strings.Replace(pyBase, "def helper", "def helper_v2", 1)),
			nil},
		{"jest-retry", js(jsBase), js("jest.retryTimes(3);\n" + jsBase),
			[]string{JestRetry}},
		{"jest-retry: vitest option", js(jsBase), js(strings.Replace(jsBase, "test('counts once', () => {", "test('counts once', { retry: 3 }, () => {", 1)),
			[]string{JestRetry}},
		{"near miss: a variable named retries", js(jsBase), js(strings.Replace(jsBase, "  c.reset();\n", "  c.reset();\n  const retries = c.retries;\n", 1)),
			nil},
		{"near miss: jest.setTimeout is not a sleep", js(jsBase), js("jest.setTimeout(10000);\n" + jsBase),
			nil},
		{"new-skip: js", js(jsBase), js(strings.Replace(jsBase, "it('resets'", "it.skip('resets'", 1)),
			[]string{NewSkip}},
		{"new-sleep: js", js(jsBase), js(strings.Replace(jsBase, "  c.reset();\n", "  c.reset();\n  await new Promise((r) => setTimeout(r, 100));\n", 1)),
			[]string{NewSleep}},
		{"deleted-test: js", js(jsBase), js(jsBase[:strings.Index(jsBase, "it('resets'")]),
			[]string{DeletedTest, FewerAssertions}},
		{"timeout-only: jest timeout", js("jest.setTimeout(5000);\n" + jsBase), js("jest.setTimeout(30000);\n" + jsBase),
			[]string{TimeoutOnly}},
		{"a proper JS fix: await the promise", js(strings.Replace(jsBase, "  c.reset();\n", "  c.reset();\n  await new Promise((r) => setTimeout(r, 100));\n", 1)),
			js(strings.Replace(jsBase, "  c.reset();\n", "  await c.reset();\n", 1)),
			nil},
	}
	changes := make([]change, len(tests))
	for i, tc := range tests {
		changes[i] = change{tc.before, tc.after}
	}
	diffs := gitDiffs(t, changes)
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			diff, src := diffs[i].diff, diffs[i].src
			got, err := Check(diff, src, Options{})
			if err != nil {
				t.Fatalf("Check: %v\n%s", err, diff)
			}
			if names := checkNames(got); !slices.Equal(names, tc.want) {
				t.Fatalf("checks = %v, want %v\nfindings: %v\ndiff:\n%s", names, tc.want, got, diff)
			}
		})
	}
}

func TestExtraProtected(t *testing.T) {
	t.Parallel()
	diffs := gitDiffs(t, []change{
		{one("deploy/prod.yaml", "a: 1\n"), one("deploy/prod.yaml", "a: 2\n")},
		{one(".GitHub/workflows/ci.yml", "on: push\n"), one(".GitHub/workflows/ci.yml", "on: [push]\n")},
	})
	got, err := Check(diffs[0].diff, diffs[0].src, Options{Protected: []string{"deploy/**"}})
	if err != nil {
		t.Fatal(err)
	}
	if names := checkNames(got); !slices.Equal(names, []string{ProtectedFile}) {
		t.Fatalf("checks = %v, want only protected-file (a protected file is not also a non-test edit)", names)
	}
	// Case-insensitive, as on macOS and Windows file systems.
	if got, err = Check(diffs[1].diff, diffs[1].src, Options{}); err != nil || !Rejected(got) {
		t.Fatalf(".GitHub/ edit: %v, %v; want rejected", got, err)
	}
}

func TestRenamedFileKeepsTests(t *testing.T) {
	t.Parallel()
	base := goTest(impT, baseBody)
	diff, src := gitDiff(t, one("a_test.go", base), one("b_test.go", base))
	got, err := Check(diff, src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Fatalf("moving a test file unchanged: %v, want no findings\n%s", got, diff)
	}
}
