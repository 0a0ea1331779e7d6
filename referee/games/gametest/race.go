//go:build race

package gametest

// Race is true when the tests run with -race, which slows play several times over.
const Race = true
