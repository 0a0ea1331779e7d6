//go:build race

package deliberation_test

// raceEnabled is true when the tests run with -race, which slows them several times: the
// longest tests then play fewer matches.
const raceEnabled = true
