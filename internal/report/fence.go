package report

import "strings"

// Fence is a backtick fence longer than any run of backticks in s and at
// least atLeast long, so untrusted text (a model-written diff, a CI log)
// cannot close its code block and turn into markdown.
func Fence(s string, atLeast int) string {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(atLeast, longest+1))
}
