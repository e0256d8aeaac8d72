//go:build race

package stats

// raceDetector: the race detector slows the simulations tenfold; they run
// on one goroutine, so it has nothing to find there.
const raceDetector = true
