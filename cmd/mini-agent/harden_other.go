//go:build !linux

package main

// hardenProcess has nothing to do outside Linux.
func hardenProcess() {}
