// Package queue is a FIFO job queue.
package queue

// Queue holds job ids in arrival order.
type Queue struct {
	items []string
}

// Push appends a job.
func (q *Queue) Push(id string) { q.items = append(q.items, id) }

// Pop removes and returns the oldest job; ok is false when empty.
func (q *Queue) Pop() (id string, ok bool) {
	if len(q.items) == 0 {
		return "", false
	}
	id = q.items[len(q.items)-1]
	q.items = q.items[:len(q.items)-1]
	return id, true
}
