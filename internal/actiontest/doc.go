// Package actiontest holds the packaging tests of the GitHub Action: they
// keep action.yml, the install script, the release workflow and the
// Dockerfile in step with each other, run the install script against a fake
// release host, and run the real action.yml end to end in nektos/act (host
// mode, no Docker) against a fake GitHub API. It has no non-test code.
//
// The act test is skipped when `act` is not on PATH, unless
// MINI_AGENT_REQUIRE_ACT=1, which turns the skip into a failure (set it in CI).
// With -short the end-to-end tests (act runs, the release build, the
// install script) are skipped and only the static checks run.
//
// Test fake: tests only; product code never imports it.
package actiontest
