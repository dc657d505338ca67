package ghapi

import (
	"net/http"
	"testing"
)

func TestAnnotations(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.handle("/repos/octo-org/octo-repo/check-runs/399444497/annotations", func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "GET")
		testFormValues(t, r, map[string]string{"per_page": "100"})
		writeJSON(w, http.StatusOK, readTestdata(t, "annotations.json"))
	})
	got, err := f.client.Annotations(t.Context(), "octo-org", "octo-repo", 399444497)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "annotations", got, []Annotation{
		{Path: "parser/parse.go", StartLine: 42, EndLine: 42, StartColumn: 9, Level: "failure",
			Title: "TestParse/empty", Message: `parse_test.go:42: got "", want "x"`},
		{Path: ".github", StartLine: 1, EndLine: 1, Level: "failure", Message: "Process completed with exit code 1."},
	})
}
