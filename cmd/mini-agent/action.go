package main

import (
	"context"
	"fmt"
	"io"

	"github.com/org/mini-agent/internal/action"
)

// runAction is `mini-agent action`: the GitHub Action's entry point. It
// takes no arguments; everything comes from the environment the runner
// sets (see docs/action.md for the contract).
func runAction(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := &command{
		name:  "action",
		usage: "action",
		about: "The GitHub Action's entry point (action.yml runs it): reads the event that started the workflow " +
			"(GITHUB_EVENT_NAME, GITHUB_EVENT_PATH), the action's inputs (INPUT_<NAME> variables) and the " +
			"repository's policy file, decides whether and how to act, runs the same pipeline as fix, and " +
			"publishes a pull request, a commit on the PR's branch or a comment. It takes no flags or arguments; " +
			"locally, use fix or explain.",
		examples: []string{
			"uses: org/mini-agent@v1   # in a workflow step (see the README)",
			"INPUT_API_KEY=... GITHUB_EVENT_NAME=workflow_run GITHUB_EVENT_PATH=event.json mini-agent action",
		},
		footer: "Exit codes: 0 fixed, explained, answered or skipped, 1 not fixed, 2 configuration or input error, 3 " +
			"validation failed, 4 a GitHub API error, 5 the model refused (or its reply was content-filtered), 130 cancelled.",
	}
	fs := c.flagSet()
	if code, done := c.parse(fs, args, stdout, stderr); done {
		return code
	}
	if fs.NArg() > 0 {
		return c.usageError(stderr, fmt.Sprintf("takes no arguments (inputs come from INPUT_* variables), got %q", fs.Args()))
	}
	return action.Run(ctx, action.ProcessEnv(stdout, stderr, versionString())).Code
}
