package testcmd

import (
	"slices"
	"testing"
)

func TestSplitCommand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		line      string
		want      []string
		needShell bool
		wantErr   bool
	}{
		{line: "go test ./...", want: []string{"go", "test", "./..."}},
		{line: "  go   test\t-v  ", want: []string{"go", "test", "-v"}},
		{line: `go test -run 'Test(A|B)$' ./x`, want: []string{"go", "test", "-run", "Test(A|B)$", "./x"}},
		{line: `pytest -k "not slow and not \"db\""`, want: []string{"pytest", "-k", `not slow and not "db"`}},
		{line: `echo a\ b 'c d'"e"`, want: []string{"echo", "a b", "c de"}},
		{line: `echo "a\xb"`, want: []string{"echo", `a\xb`}},
		{line: `sh -c 'echo hi; exit 3'`, want: []string{"sh", "-c", "echo hi; exit 3"}},
		{line: "echo a=b", want: []string{"echo", "a=b"}},
		{line: "'A=b' cmd", want: []string{"A=b", "cmd"}},
		{line: "go test ./... && echo ok", needShell: true},
		{line: "go test | tee log", needShell: true},
		{line: "go test; true", needShell: true},
		{line: "go test > out", needShell: true},
		{line: "go test 2>&1", needShell: true},
		{line: "go test $(go list ./...)", needShell: true},
		{line: "go test `go list`", needShell: true},
		{line: "go test $PKGS", needShell: true},
		{line: `go test "$PKGS"`, needShell: true},
		{line: "CGO_ENABLED=0 go test ./...", needShell: true},
		{line: "pytest tests/*.py", needShell: true},
		{line: "go test ~/x", needShell: true},
		{line: "go test # comment", needShell: true},
		{line: "go test\necho two", needShell: true},
		{line: "(cd x && go test)", needShell: true},
		{line: "echo 'unterminated", wantErr: true},
		{line: `echo "unterminated`, wantErr: true},
		{line: "   ", wantErr: true},
	}
	for _, tt := range tests {
		got, needShell, err := splitCommand(tt.line)
		if (err != nil) != tt.wantErr || needShell != tt.needShell || !slices.Equal(got, tt.want) {
			t.Errorf("splitCommand(%q) = %q, shell %v, err %v; want %q, shell %v, err %v",
				tt.line, got, needShell, err, tt.want, tt.needShell, tt.wantErr)
		}
	}
}
