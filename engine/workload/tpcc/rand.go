package tpcc

import (
	"math/rand/v2"
	"strconv"
)

// NURand's run-time constants (clause 2.1.6). The load uses cLoad for
// C_LAST; the run's differs from it by 66, within the 65..119 the
// specification allows (clause 2.1.6.1), so that the run's last names do
// not simply replay the load's.
const (
	cLoad    = 157
	cRunLast = cLoad + 66
	cRunID   = 259  // C for C_ID, in 0..1023
	cRunItem = 7911 // C for OL_I_ID, in 0..8191
)

// syllables make customer last names (clause 4.3.2.3).
var syllables = [10]string{"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"}

// lastName is the name for number n in 0..999.
func lastName(n int) string {
	return syllables[n/100] + syllables[(n/10)%10] + syllables[n%10]
}

// rng is one thread's generator for the specification's random values.
type rng struct{ r *rand.Rand }

func newRNG(seed uint64) *rng {
	return &rng{rand.New(rand.NewPCG(seed, seed^0x7bc2e1f3a5d94c61))}
}

// uniform is random(x, y): an integer in [x, y].
func (g *rng) uniform(x, y int) int { return x + g.r.IntN(y-x+1) }

// nurand is NURand(A, x, y) with run-time constant c (clause 2.1.6).
func (g *rng) nurand(a, x, y, c int) int {
	return (((g.uniform(0, a) | g.uniform(x, y)) + c) % (y - x + 1)) + x
}

const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// astring is a random a-string of x to y characters (clause 4.3.2.2).
func (g *rng) astring(x, y int) string {
	b := make([]byte, g.uniform(x, y))
	for i := range b {
		b[i] = alnum[g.r.IntN(len(alnum))]
	}
	return string(b)
}

// nstring is a random n-string of n digits.
func (g *rng) nstring(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('0' + g.r.IntN(10))
	}
	return string(b)
}

// zip is four random digits and "11111" (clause 4.3.2.7).
func (g *rng) zip() string { return g.nstring(4) + "11111" }

// data is I_DATA or S_DATA: 26..50 characters, 10% holding "ORIGINAL" at
// a random position (clause 4.3.3.1).
func (g *rng) data() string {
	s := g.astring(26, 50)
	if g.uniform(1, 10) == 1 {
		at := g.uniform(0, len(s)-8)
		s = s[:at] + "ORIGINAL" + s[at+8:]
	}
	return s
}

// decimal formats hundredths (or ten-thousandths with scale 4) as the
// decimal string the server stores exactly.
func decimal(units int64, scale int) string {
	neg := units < 0
	if neg {
		units = -units
	}
	s := strconv.FormatInt(units, 10)
	for len(s) <= scale {
		s = "0" + s
	}
	s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	if neg {
		s = "-" + s
	}
	return s
}
