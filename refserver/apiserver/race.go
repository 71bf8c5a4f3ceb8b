//go:build race

package apiserver

// raceShift doubles writeStackPad in a build with the race detector, whose
// instrumentation deepens every frame (a server embedded in tests run with
// -race is built so).
const raceShift = 1
