//go:build !linux

package tools

// The hostile-code tests are Linux-only (Landlock, /proc, setsid).
func hostileHelperArgs() ([]string, bool) { return nil, false }

func hostileHelper([]string) int { return 2 }
