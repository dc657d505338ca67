package a

import (
	"fmt"
	"testing"
)

func TestAlpha(t *testing.T) { fmt.Println("ALPHA RAN") }

func TestBeta(t *testing.T) { fmt.Println("BETA RAN") }

func TestGamma(t *testing.T) {
	fmt.Println("GAMMA RAN")
	if Add(1, 1) != 3 {
		t.Fatal("GAMMA FAILED: 1+1 is not 3")
	}
}

func TestSub(t *testing.T) {
	t.Run("one", func(t *testing.T) { fmt.Println("SUB ONE RAN") })
	t.Run("two words", func(t *testing.T) { fmt.Println("SUB TWO RAN") })
}
