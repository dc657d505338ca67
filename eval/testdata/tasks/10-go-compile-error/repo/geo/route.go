package geo

// Length returns the length of the path through the points, in order.
func Length(points []Point) float64 {
	var total float64
	for i := 1; i < len(points); i++ {
		total += Distance(points[i-1], points[i])
	}
	return total
}
