package queue

import "testing"

func TestQueueOrder(t *testing.T) {
	var q Queue
	q.Push("a")
	q.Push("b")
	if id, _ := q.Pop(); id != "a" {
		t.Fatalf("first Pop = %q, want \"a\" (FIFO)", id)
	}
}
