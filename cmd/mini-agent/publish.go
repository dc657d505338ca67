package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/org/mini-agent/internal/action"
	"github.com/org/mini-agent/internal/config"
)

func publishCommand() (*command, *string) {
	cfgPath := new(string)
	return &command{
		name:  "publish",
		usage: "publish [--config PATH] BUNDLE",
		about: "Publishes a bundle made by 'mini-agent fix --bundle BUNDLE' in an earlier, read-only job of the " +
			"same workflow run (the two-job recipe): the event is routed again and the repository's policy (read " +
			"from the default branch) is applied to the bundle before anything is written. Needs GITHUB_TOKEN (or " +
			"INPUT_GITHUB_TOKEN) with contents and pull-requests write permission, and the runner's GITHUB_EVENT_* " +
			"variables. Sets the same outputs as the action when GITHUB_OUTPUT is set.",
		groups: []flagGroup{{"Policy", []string{"config"}}},
		meta:   map[string]string{"config": "PATH"},
		examples: []string{
			"mini-agent publish bundle.json",
			"mini-agent publish --config .github/mini-agent.yml bundle.json",
		},
		footer: "Exit codes: 0 published (or skipped), 1 not fixed, 2 usage or configuration error, 3 validation " +
			"failed, 4 a GitHub API error or a bundle refused by the policy, 5 the model refused (the bundle's status refused).",
		define: func(fs *flag.FlagSet) {
			fs.StringVar(cfgPath, "config", "", "policy file in the repository (default "+config.DefaultPath+")")
		},
	}, cfgPath
}

// runPublish is `mini-agent publish BUNDLE`, the write half of the two-job
// recipe.
func runPublish(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, cfg := publishCommand()
	fs := c.flagSet()
	if code, done := c.parse(fs, args, stdout, stderr); done {
		return code
	}
	if fs.NArg() != 1 {
		return c.usageError(stderr, fmt.Sprintf("give one bundle file, got %d arguments; Usage: mini-agent %s", fs.NArg(), c.usage))
	}
	return action.Publish(ctx, action.ProcessEnv(stdout, stderr, versionString()), fs.Arg(0), *cfg).Code
}
