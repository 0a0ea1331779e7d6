//go:build !race

package deliberation_test

// raceEnabled is true when the tests run with -race (see race_test.go).
const raceEnabled = false
