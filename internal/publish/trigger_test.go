package publish

import "testing"

func TestHasDispatchTrigger(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, src string
		want, err bool
	}{
		{"scalar", "on: workflow_dispatch\njobs: {}\n", true, false},
		{"sequence", "name: CI\non: [push, workflow_dispatch]\n", true, false},
		{"mapping null", "on:\n  push:\n    branches: [main]\n  workflow_dispatch:\n", true, false},
		{"mapping inputs", "on:\n  workflow_dispatch:\n    inputs:\n      x: {required: false}\n", true, false},
		{"quoted key", "\"on\":\n  - workflow_dispatch\n", true, false},
		{"push only", "on: [push, pull_request]\n", false, false},
		{"scalar push", "on: push\n", false, false},
		{"only mentioned in a job", "on: push\njobs:\n  a:\n    if: github.event_name == 'workflow_dispatch'\n    runs-on: x\n", false, false},
		{"comment", "on: push # add workflow_dispatch later\n", false, false},
		{"nested on", "jobs:\n  a:\n    on: workflow_dispatch\n", false, true},
		{"workflow_call only", "on:\n  workflow_call:\n", false, false},
		{"not yaml", "on: [push\n", false, true},
		{"not a mapping", "- on\n", false, true},
		{"empty", "", false, true},
	} {
		got, err := hasDispatchTrigger([]byte(tt.src))
		if got != tt.want || (err != nil) != tt.err {
			t.Errorf("%s: = %v, %v; want %v, error %v", tt.name, got, err, tt.want, tt.err)
		}
	}
	big := make([]byte, maxWorkflowBytes+1)
	if _, err := hasDispatchTrigger(big); err == nil {
		t.Error("an oversized workflow file was parsed")
	}
}
