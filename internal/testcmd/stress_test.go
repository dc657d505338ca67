package testcmd

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStressArgv(t *testing.T) {
	t.Parallel()
	ws := mappingWorkspace(t)
	for _, tt := range []struct {
		name     string
		command  string
		sel      Selection
		form     Form
		stress   Stress
		want     []string
		wantNote string
	}{
		{"nothing asked", "go test ./...", Selection{}, Plain, Stress{}, []string{"go", "test", "./..."}, ""},
		{"count", "go test ./...", Selection{}, Plain, Stress{Count: 20}, []string{"go", "test", "-count=20", "./..."}, ""},
		{"all four", "go test ./...", Selection{}, Plain, Stress{Count: 5, Race: true, Shuffle: "on", CPU: []int{1, 2, 4}},
			[]string{"go", "test", "-count=5", "-race", "-shuffle=on", "-cpu=1,2,4", "./..."}, ""},
		{"seed", "go test ./...", Selection{}, Plain, Stress{Shuffle: "1700000000"}, []string{"go", "test", "-shuffle=1700000000", "./..."}, ""},
		{"replaces the command's own", "go test -count 1 -race=false -test.cpu=8 -timeout 5m ./...", Selection{}, Plain, Stress{Count: 3, Race: true, CPU: []int{2}},
			[]string{"go", "test", "-count=3", "-race", "-cpu=2", "-timeout", "5m", "./..."}, "-count 1 was replaced"},
		{"keeps what it does not set", "go test -count=1 -shuffle=off ./...", Selection{}, Plain, Stress{Race: true},
			[]string{"go", "test", "-race", "-count=1", "-shuffle=off", "./..."}, ""},
		{"narrowed, verbose, -args kept", "go test ./... -args -custom", Selection{Tests: []string{"TestA"}, Packages: []string{"pkg"}}, Verbose, Stress{Count: 10},
			[]string{"go", "test", "-count=10", "-v", "-run", "^(TestA)$", "./pkg", "-args", "-custom"}, ""},
		{"json form", "go test ./...", Selection{}, GoJSON, Stress{Count: 2},
			[]string{"go", "test", "-count=2", "-json", "./..."}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			inv, err := mustParse(t, tt.command).Argv(ws, tt.sel, tt.form)
			if err != nil {
				t.Fatal(err)
			}
			before := strings.Join(inv.Argv, " ")
			got, err := inv.Stress(tt.stress)
			if err != nil {
				t.Fatalf("Stress: %v", err)
			}
			if diff := cmp.Diff(tt.want, got.Argv); diff != "" {
				t.Errorf("argv (-want +got):\n%s", diff)
			}
			if notes := strings.Join(got.Notes, "; "); !strings.Contains(notes, tt.wantNote) || tt.wantNote == "" && notes != "" {
				t.Errorf("notes %q, want %q", notes, tt.wantNote)
			}
			if strings.Join(inv.Argv, " ") != before {
				t.Errorf("Stress changed the invocation it was called on: %q", inv.Argv)
			}
		})
	}
}

func TestStressRefusals(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		command     string
		stress      Stress
		unsupported bool
		want        string
	}{
		{"pytest", Stress{Count: 5}, true, "pytest"},
		{"npx jest", Stress{Shuffle: "on"}, true, "jest"},
		{"cargo test", Stress{Race: true}, true, "cargo test"},
		{"go test ./... | tee x", Stress{Count: 2}, true, "unrecognized"},
		{"go test ./...", Stress{Count: -1}, false, "out of range"},
		{"go test ./...", Stress{Count: 1 << 20}, false, "out of range"},
		{"go test ./...", Stress{Shuffle: "yes"}, false, "neither"},
		{"go test ./...", Stress{Shuffle: "1;rm"}, false, "neither"},
		{"go test ./...", Stress{CPU: []int{0}}, false, "out of range"},
		{"go test ./...", Stress{CPU: make([]int, 17)}, false, "at most 16"},
		{"pytest", Stress{Count: -1}, false, "out of range"},
	} {
		inv, err := mustParse(t, tt.command).Argv(nil, Selection{}, Plain)
		if err != nil {
			t.Fatal(err)
		}
		got, err := inv.Stress(tt.stress)
		if err == nil || errors.Is(err, ErrUnsupported) != tt.unsupported || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q %+v: %+v, err %v; want unsupported=%v saying %q", tt.command, tt.stress, got, err, tt.unsupported, tt.want)
		}
	}
	// Nothing asked is never refused: the caller need not special-case it.
	inv, _ := mustParse(t, "pytest").Argv(nil, Selection{}, Plain)
	if got, err := inv.Stress(Stress{}); err != nil || got != inv {
		t.Errorf("zero Stress on pytest: %v, %v", got, err)
	}
}
