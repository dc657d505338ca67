// Package config reads the service configuration.
package config

import (
	"fmt"
	"strconv"
)

// DefaultPort is used when PORT is empty.
const DefaultPort = 8080

// Port parses the PORT setting: empty means DefaultPort, otherwise a
// number from 1 to 65535.
func Port(s string) (int, error) {
	if s == "" {
		return DefaultPort, nil
	}
	p, err := strconv.Atoi(s)
	if err != nil || p < 1 || p > 65536 {
		return 0, fmt.Errorf("config: invalid port %q", s)
	}
	return p, nil
}
