//go:build !race

package deliberation_test

const raceEnabled = false
