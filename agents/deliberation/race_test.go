//go:build race

package deliberation_test

const raceEnabled = true
