//go:build !race

package apiserver

// raceShift is 0 without the race detector (race.go).
const raceShift = 0
