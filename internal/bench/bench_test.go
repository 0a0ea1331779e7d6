package bench

import (
	"context"
	"testing"
)

func setup(b *testing.B) *Setup {
	b.Helper()
	s, err := NewSetup(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Close)
	return s
}

func BenchmarkMatch(b *testing.B)     { setup(b).Matches(b) }
func BenchmarkRoundTrip(b *testing.B) { setup(b).RoundTrips(b) }

func BenchmarkAlternatingRoundTrip(b *testing.B) { setup(b).AlternatingRoundTrips(b) }

// TestPlayMatch checks the benchmark's match is a real, finished match with moves.
func TestPlayMatch(t *testing.T) {
	s, err := NewSetup(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	moves, err := s.PlayMatch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if moves < 2 {
		t.Fatalf("benchmark match had %d moves; want a bargaining match of several", moves)
	}
	if err := s.RoundTrip(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
}
