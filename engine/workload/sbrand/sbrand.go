// Package sbrand reproduces sysbench 1.0.20's random number generators:
// its PRNG (xoroshiro128+), the uniform, gaussian, special and pareto
// distributions behind --rand-type, random strings from '#'/'@' templates and
// the unique sequence used by oltp_insert. Workloads only agree with sysbench's
// when the keys they touch are drawn from the same distributions.
package sbrand

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"strings"
	"sync/atomic"
)

// Dist names a distribution of --rand-type.
type Dist int

const (
	Uniform Dist = iota
	Gaussian
	Special
	Pareto
	Zipfian // dbduel extension (sysbench 1.1 has it, 1.0.20 does not)
)

// ParseDist maps a --rand-type value to a Dist.
func ParseDist(s string) (Dist, error) {
	switch strings.ToLower(s) {
	case "uniform":
		return Uniform, nil
	case "gaussian":
		return Gaussian, nil
	case "special":
		return Special, nil
	case "pareto":
		return Pareto, nil
	case "zipfian":
		return Zipfian, nil
	}
	return 0, fmt.Errorf("invalid --rand-type %q: want uniform, gaussian, special, pareto or zipfian", s)
}

func (d Dist) String() string {
	return [...]string{"uniform", "gaussian", "special", "pareto", "zipfian"}[d]
}

// Params are the --rand-* options; DefaultParams holds sysbench 1.0.20's defaults.
type Params struct {
	Dist       Dist
	SpecIter   int     // --rand-spec-iter
	SpecPct    int     // --rand-spec-pct
	SpecRes    int     // --rand-spec-res
	ParetoH    float64 // --rand-pareto-h
	ZipfianExp float64 // --rand-zipfian-exp (extension)
}

// DefaultParams are sysbench 1.0.20's defaults.
func DefaultParams() Params {
	return Params{Dist: Special, SpecIter: 12, SpecPct: 1, SpecRes: 75, ParetoH: 0.2, ZipfianExp: 0.8}
}

// Validate reports parameter values sysbench would reject or that make no sense.
func (p Params) Validate() error {
	switch {
	case p.SpecIter < 1:
		return fmt.Errorf("--rand-spec-iter must be at least 1")
	case p.SpecPct < 0 || p.SpecPct > 100:
		return fmt.Errorf("--rand-spec-pct must be within 0..100")
	case p.SpecRes < 0 || p.SpecRes >= 100:
		return fmt.Errorf("--rand-spec-res must be within 0..99")
	case p.ParetoH <= 0 || p.ParetoH >= 1:
		return fmt.Errorf("--rand-pareto-h must be within (0, 1)")
	case p.ZipfianExp < 0:
		return fmt.Errorf("--rand-zipfian-exp must be >= 0")
	}
	return nil
}

// Rand is one thread's generator. Not safe for concurrent use: each worker
// owns one, as each sysbench thread owns its state.
type Rand struct {
	s0, s1 uint64
	p      Params
	// precomputed as sysbench does
	iterMult, pctMult, pct2Mult, resMult, paretoPow float64
}

// New returns a generator seeded with seed (splitmix64 spreads it over the state).
func New(p Params, seed uint64) *Rand {
	r := &Rand{p: p}
	r.s0 = splitmix(&seed)
	r.s1 = splitmix(&seed)
	if r.s0 == 0 && r.s1 == 0 {
		r.s1 = 1
	}
	r.iterMult = 1.0 / float64(p.SpecIter)
	r.pctMult = float64(p.SpecPct) / 100.0
	r.pct2Mult = float64(p.SpecPct) / 200.0
	r.resMult = 100.0 / (100.0 - float64(p.SpecRes))
	r.paretoPow = math.Log(p.ParetoH) / math.Log(1.0-p.ParetoH)
	return r
}

func splitmix(x *uint64) uint64 {
	*x += 0x9e3779b97f4a7c15
	z := *x
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Uint64 is xoroshiro128+, sysbench's PRNG.
func (r *Rand) Uint64() uint64 {
	s0, s1 := r.s0, r.s1
	result := s0 + s1
	s1 ^= s0
	r.s0 = bits.RotateLeft64(s0, 55) ^ s1 ^ (s1 << 14)
	r.s1 = bits.RotateLeft64(s1, 36)
	return result
}

// Float64 is a double in [0, 1) from the top 53 bits, as sb_rand_uniform_double.
func (r *Rand) Float64() float64 {
	return float64(r.Uint64()>>11) * (1.0 / (1 << 53))
}

// Default draws from [a, b] with the --rand-type distribution (sysbench.rand.default).
func (r *Rand) Default(a, b uint32) uint32 {
	switch r.p.Dist {
	case Gaussian:
		return r.Gaussian(a, b)
	case Special:
		return r.Special(a, b)
	case Pareto:
		return r.Pareto(a, b)
	case Zipfian:
		return r.Zipfian(a, b)
	}
	return r.Uniform(a, b)
}

// Uniform draws uniformly from [a, b] (sysbench.rand.uniform).
func (r *Rand) Uniform(a, b uint32) uint32 {
	return a + uint32(r.Float64()*float64(uint64(b)-uint64(a)+1))
}

// Gaussian averages SpecIter uniform draws (sb_rand_gaussian).
func (r *Rand) Gaussian(a, b uint32) uint32 {
	t := float64(uint64(b) - uint64(a) + 1)
	sum := 0.0
	for i := 0; i < r.p.SpecIter; i++ {
		sum += r.Float64() * t
	}
	return a + uint32(sum*r.iterMult)
}

// Special sends SpecRes percent of draws uniformly into the SpecPct percent
// wide middle of the range and the rest through the gaussian (sb_rand_special).
func (r *Rand) Special(a, b uint32) uint32 {
	t := float64(b - a)
	rangeSize := t * r.resMult
	rnd := r.Float64()
	if rnd*rangeSize < t {
		sum := 0.0
		for i := 0; i < r.p.SpecIter; i++ {
			sum += r.Float64()
		}
		return a + uint32(sum*t*r.iterMult)
	}
	d := t * r.pctMult
	res := rnd * (d + 1)
	res += t/2 - t*r.pct2Mult
	return a + uint32(res)
}

// Pareto is sb_rand_pareto with shape --rand-pareto-h.
func (r *Rand) Pareto(a, b uint32) uint32 {
	return a + uint32(float64(uint64(b)-uint64(a)+1)*math.Pow(r.Float64(), r.paretoPow))
}

// Zipfian draws by rejection-inversion (Hörmann & Derflinger), as sysbench 1.1.
func (r *Rand) Zipfian(a, b uint32) uint32 {
	n := float64(uint64(b) - uint64(a) + 1)
	e := r.p.ZipfianExp
	hx1 := zipfHIntegral(1.5, e) - 1
	hn := zipfHIntegral(n+0.5, e)
	s := 2 - zipfHIntegralInverse(zipfHIntegral(2.5, e)-zipfH(2, e), e)
	for {
		u := hn + r.Float64()*(hx1-hn)
		x := zipfHIntegralInverse(u, e)
		k := math.Floor(x + 0.5)
		if k < 1 {
			k = 1
		} else if k > n {
			k = n
		}
		if k-x <= s || u >= zipfHIntegral(k+0.5, e)-zipfH(k, e) {
			return a + uint32(k) - 1
		}
	}
}

func zipfHIntegral(x, e float64) float64 {
	lx := math.Log(x)
	return zipfHelper2((1-e)*lx) * lx
}
func zipfH(x, e float64) float64 { return math.Exp(-e * math.Log(x)) }
func zipfHIntegralInverse(x, e float64) float64 {
	t := x * (1 - e)
	if t < -1 {
		t = -1 // numerical guard, as the reference implementation
	}
	return math.Exp(zipfHelper1(t) * x)
}

// zipfHelper1 is log1p(x)/x, stable near 0.
func zipfHelper1(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Log1p(x) / x
	}
	return 1 - x*(0.5-x*(1.0/3-0.25*x))
}

// zipfHelper2 is expm1(x)/x, stable near 0.
func zipfHelper2(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Expm1(x) / x
	}
	return 1 + x*0.5*(1+x*(1.0/3)*(1+0.25*x))
}

// String fills a template: '#' becomes a digit, '@' a lowercase letter (sb_rand_str).
func (r *Rand) String(template string) string {
	buf := make([]byte, len(template))
	r.FillString(buf, template)
	return string(buf)
}

// FillString writes the filled template into buf (len(buf) >= len(template)),
// so the hot path need not allocate.
func (r *Rand) FillString(buf []byte, template string) {
	for i := 0; i < len(template); i++ {
		switch template[i] {
		case '#':
			buf[i] = byte(r.Uniform('0', '9'))
		case '@':
			buf[i] = byte(r.Uniform('a', 'z'))
		default:
			buf[i] = template[i]
		}
	}
}

// Digits is a FillString template compiled for FillDigits: its runs of
// '#' (at most 19 each, one 64-bit draw a run) and its '@' letters, in
// template order, which is the order of their draws.
type Digits struct {
	template string
	draws    []digitDraw
}

type digitDraw struct {
	at, n  int
	letter bool // '@': one letter from Uniform('a', 'z')
}

// CompileDigits compiles a template for FillDigits.
func CompileDigits(template string) *Digits {
	d := &Digits{template: template}
	for i := 0; i < len(template); {
		switch template[i] {
		case '@':
			d.draws = append(d.draws, digitDraw{at: i, n: 1, letter: true})
			i++
		case '#':
			n := 1
			for n < 19 && i+n < len(template) && template[i+n] == '#' {
				n++
			}
			d.draws = append(d.draws, digitDraw{at: i, n: n})
			i += n
		default:
			i++
		}
	}
	return d
}

// Len is the length of the template, and so of what FillDigits writes.
func (d *Digits) Len() int { return len(d.template) }

// FillDigits is FillString for the bulk loads of prepare, where the
// client's CPU is taken from the server on a small machine: the same
// templates and the same uniform distribution of characters, but each run
// of up to 19 '#' comes from one 64-bit draw x: the run's value is the high
// word of x·10^n (uniform over [0, 10^n) up to a relative bias below
// 10^n/2^64, so its digits are uniform and independent): the first n
// decimal digits of x/2^64, two per multiplication. buf holds d.Len() bytes.
func (r *Rand) FillDigits(buf []byte, d *Digits) {
	buf = buf[:len(d.template)]
	copy(buf, d.template)
	for _, dr := range d.draws {
		if dr.letter {
			buf[dr.at] = byte(r.Uniform('a', 'z'))
			continue
		}
		run := buf[dr.at : dr.at+dr.n]
		frac := r.Uint64()
		j := 0
		for ; j+2 <= len(run); j += 2 {
			var v uint64
			v, frac = bits.Mul64(frac, 100)
			binary.LittleEndian.PutUint16(run[j:], digitPairs[v%100])
		}
		if j < len(run) {
			v, _ := bits.Mul64(frac, 10)
			run[j] = byte('0' + v)
		}
	}
}

// digitPairs[v] is the two characters of v < 100, as a little-endian word.
var digitPairs = func() (p [100]uint16) {
	for v := range p {
		p[v] = uint16('0'+v/10) | uint16('0'+v%10)<<8
	}
	return p
}()

// Unique is sysbench's process-wide sequence of distinct uint32 values
// (sb_rand_unique): a permutation of a counter, safe for concurrent use.
type Unique struct {
	index  atomic.Uint32
	offset uint32
}

// NewUnique seeds the sequence from two values, as sysbench seeds it from random().
func NewUnique(index, offset uint32) *Unique {
	u := &Unique{offset: uniquePermute(uniquePermute(offset) + 0x46790905)}
	u.index.Store(uniquePermute(uniquePermute(index) + 0x682f0161))
	return u
}

// Next returns the next value of the sequence; no value repeats within 2^32 calls.
func (u *Unique) Next() uint32 {
	i := u.index.Add(1) - 1
	return uniquePermute((uniquePermute(i) + u.offset) ^ 0x5bf03635)
}

func uniquePermute(x uint32) uint32 {
	const prime = 4294967291
	if x >= prime {
		return x
	}
	residue := uint32(uint64(x) * uint64(x) % prime)
	if x <= prime/2 {
		return residue
	}
	return prime - residue
}
