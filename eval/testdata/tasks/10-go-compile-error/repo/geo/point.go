// Package geo has planar geometry helpers.
package geo

import "math"

// Point is a position on the plane.
type Point struct{ X, Y float64 }

// Dist returns the Euclidean distance between p and q.
func Dist(p, q Point) float64 {
	return math.Hypot(q.X-p.X, q.Y-p.Y)
}
