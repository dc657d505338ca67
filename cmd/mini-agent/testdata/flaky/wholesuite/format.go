// Package format formats numbers.
package format

import "strconv"

// Default is the format Format uses when none is given.
var Default = "text"

// Format formats n in the format f ("text" or "hex"), or in Default.
func Format(n int, f string) string {
	if f == "" {
		f = Default
	}
	if f == "hex" {
		return "0x" + strconv.FormatInt(int64(n), 16)
	}
	return strconv.Itoa(n)
}
