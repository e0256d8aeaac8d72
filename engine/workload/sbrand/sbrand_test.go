package sbrand

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/stat"
)

// sysbenchSamples draws n values from [a, b] with real sysbench 1.0.20's
// sysbench.rand.default under the given --rand-type, from a fixed seed
// (sysbench seeds from the clock otherwise) so the test cannot flake.
func sysbenchSamples(t *testing.T, dist string, n int, a, b uint32) []float64 {
	t.Helper()
	bin, err := exec.LookPath("sysbench")
	if err != nil {
		t.Fatalf("sysbench is required for this test (apt-get install sysbench): %v", err)
	}
	script := filepath.Join(t.TempDir(), "draw.lua")
	lua := fmt.Sprintf("function event()\n for i = 1, %d do io.write(sysbench.rand.default(%d, %d), \"\\n\") end\nend\n", n, a, b)
	if err := os.WriteFile(script, []byte(lua), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, script, "--events=1", "--threads=1", "--rand-seed=12345", "--rand-type="+dist, "run").Output()
	if err != nil {
		t.Fatalf("sysbench: %v", err)
	}
	var xs []float64
	sc := bufio.NewScanner(bytes.NewReader(out))
	started := false
	for sc.Scan() {
		line := sc.Text()
		if line == "Threads started!" {
			started = true
			continue
		}
		if !started {
			continue
		}
		v, err := strconv.ParseFloat(line, 64)
		if err != nil {
			if len(xs) > 0 {
				break
			}
			continue
		}
		xs = append(xs, v)
	}
	if len(xs) != n {
		t.Fatalf("got %d samples from sysbench, want %d", len(xs), n)
	}
	return xs
}

func ksCritical(n, m int, alpha float64) float64 {
	c := math.Sqrt(-math.Log(alpha/2) / 2)
	return c * math.Sqrt(float64(n+m)/float64(n*m))
}

func TestDistributionsMatchSysbench(t *testing.T) {
	const n = 20000
	for _, dist := range []string{"uniform", "gaussian", "special", "pareto"} {
		t.Run(dist, func(t *testing.T) {
			a, b := uint32(1), uint32(10000)
			theirs := sysbenchSamples(t, dist, n, a, b)
			d, _ := ParseDist(dist)
			p := DefaultParams()
			p.Dist = d
			r := New(p, 42)
			ours := make([]float64, n)
			for i := range ours {
				v := r.Default(a, b)
				if v < a || v > b+1 {
					t.Fatalf("%s drew %d outside [%d, %d]", dist, v, a, b)
				}
				ours[i] = float64(v)
			}
			sort.Float64s(ours)
			sort.Float64s(theirs)
			ks := stat.KolmogorovSmirnov(ours, nil, theirs, nil)
			crit := ksCritical(n, n, 0.001)
			t.Logf("%s: KS D=%.4f (critical %.4f at alpha=0.001)", dist, ks, crit)
			if ks > crit {
				t.Errorf("%s: two-sample KS statistic %.4f exceeds %.4f: not sysbench's distribution", dist, ks, crit)
			}
		})
	}
}

// A wrong distribution must fail the same test: the test can tell them apart.
func TestKSSeparatesDistributions(t *testing.T) {
	const n = 20000
	theirs := sysbenchSamples(t, "special", n, 1, 10000)
	p := DefaultParams()
	p.Dist = Uniform
	r := New(p, 7)
	ours := make([]float64, n)
	for i := range ours {
		ours[i] = float64(r.Default(1, 10000))
	}
	sort.Float64s(ours)
	sort.Float64s(theirs)
	if ks := stat.KolmogorovSmirnov(ours, nil, theirs, nil); ks <= ksCritical(n, n, 0.001) {
		t.Fatalf("uniform vs sysbench special: KS D=%.4f did not separate them", ks)
	}
}

func TestStringTemplate(t *testing.T) {
	r := New(DefaultParams(), 1)
	s := r.String("###-@@@")
	if len(s) != 7 || s[3] != '-' {
		t.Fatalf("bad filled template %q", s)
	}
	for i, c := range s {
		switch {
		case i < 3 && (c < '0' || c > '9'):
			t.Fatalf("position %d of %q is not a digit", i, s)
		case i > 3 && (c < 'a' || c > 'z'):
			t.Fatalf("position %d of %q is not a letter", i, s)
		}
	}
}

func TestUniqueDoesNotRepeat(t *testing.T) {
	u := NewUnique(12345, 67890)
	seen := make(map[uint32]bool)
	for i := 0; i < 200000; i++ {
		v := u.Next()
		if seen[v] {
			t.Fatalf("value %d repeated after %d draws", v, i)
		}
		seen[v] = true
	}
}

func TestZipfianSkewsLow(t *testing.T) {
	p := DefaultParams()
	p.Dist = Zipfian
	r := New(p, 3)
	low := 0
	for i := 0; i < 10000; i++ {
		v := r.Default(1, 1000)
		if v < 1 || v > 1000 {
			t.Fatalf("zipfian drew %d outside [1, 1000]", v)
		}
		if v <= 10 {
			low++
		}
	}
	// With exponent 0.8 over 1000 values, the first 1% of keys get ~20% of draws.
	if low < 1000 {
		t.Fatalf("zipfian: only %d of 10000 draws in the 10 hottest keys", low)
	}
}

func TestParseDistRejectsUnknown(t *testing.T) {
	if _, err := ParseDist("weird"); err == nil {
		t.Fatal("ParseDist accepted an unknown distribution")
	}
}

// Each run of '#' holds the high word of x·10^n, zero-padded to n digits,
// for the run's draw x: checked against big-integer arithmetic on the same
// draws.
func TestFillDigitsIsTheRunsValue(t *testing.T) {
	tmpl := "###########-###-@#-###################-##@@"
	a, b := New(DefaultParams(), 7), New(DefaultParams(), 7)
	buf := make([]byte, len(tmpl))
	compiled := CompileDigits(tmpl)
	for range 1000 {
		a.FillDigits(buf, compiled)
		for i := 0; i < len(tmpl); {
			if tmpl[i] == '@' {
				if want := byte(b.Uniform('a', 'z')); buf[i] != want {
					t.Fatalf("letter at %d: %c, want %c", i, buf[i], want)
				}
			}
			if tmpl[i] != '#' {
				i++
				continue
			}
			n := 0
			for i+n < len(tmpl) && tmpl[i+n] == '#' && n < 19 {
				n++
			}
			x := new(big.Int).SetUint64(b.Uint64())
			v := x.Mul(x, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil))
			v.Rsh(v, 64)
			want := fmt.Sprintf("%0*s", n, v.String())
			if got := string(buf[i : i+n]); got != want {
				t.Fatalf("run at %d: %s, want %s", i, got, want)
			}
			i += n
		}
	}
}

// FillDigits keeps the template and draws each digit uniformly: a
// chi-square test over 200k digits (9 degrees of freedom; the 0.999
// quantile is 27.9), and the digit pairs within a draw are independent.
func TestFillDigitsIsUniform(t *testing.T) {
	r := New(DefaultParams(), 42)
	tmpl := "###########-###########-###########-###########-###########"
	buf := make([]byte, len(tmpl))
	compiled := CompileDigits(tmpl)
	var counts [10]float64
	var pairs [100]float64
	n := 0
	for range 4000 {
		r.FillDigits(buf, compiled)
		for i, c := range buf {
			if tmpl[i] == '-' {
				if c != '-' {
					t.Fatalf("template not kept: %s", buf)
				}
				continue
			}
			counts[c-'0']++
			n++
			if i+1 < len(buf) && tmpl[i+1] == '#' {
				pairs[int(c-'0')*10+int(buf[i+1]-'0')]++
			}
		}
	}
	chi := 0.0
	for _, c := range counts {
		e := float64(n) / 10
		chi += (c - e) * (c - e) / e
	}
	if chi > 27.9 {
		t.Fatalf("digits not uniform: chi² %.1f, counts %v", chi, counts)
	}
	total := 0.0
	for _, p := range pairs {
		total += p
	}
	chi = 0
	for _, p := range pairs {
		e := total / 100
		chi += (p - e) * (p - e) / e
	}
	if chi > 148.2 { // 99 degrees of freedom, 0.999 quantile
		t.Fatalf("consecutive digits not independent: chi² %.1f", chi)
	}
}

// A row's c and pad, as prepare fills them.
func BenchmarkFillDigits(b *testing.B) {
	c := CompileDigits("###########-###########-###########-###########-###########-###########-###########-###########-###########-###########")
	pad := CompileDigits("###########-###########-###########-###########-###########")
	r := New(DefaultParams(), 1)
	bc, bp := make([]byte, c.Len()), make([]byte, pad.Len())
	for b.Loop() {
		r.FillDigits(bc, c)
		r.FillDigits(bp, pad)
	}
}
