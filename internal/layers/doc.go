// Package layers holds the import-layer test of the module: it lists every
// package with `go list`, classifies each by the table in layers_test.go
// (entry point, application, job level, leaf engine, test fake) and fails
// when an import crosses a layer the wrong way, a package is missing from
// the table, or an internal package's doc does not name its layer.
//
// Test fake: test only, it has no non-test code.
package layers
