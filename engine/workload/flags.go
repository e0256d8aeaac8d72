package workload

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// sbBool is a boolean option as sysbench reads one: on/off beside
// true/false and 1/0 (users write --range-selects=off), and alone it means on.
type sbBool struct{ v *bool }

func (b sbBool) Type() string { return "on|off" }

func (b sbBool) String() string {
	if b.v != nil && *b.v {
		return "on"
	}
	return "off"
}

func (b sbBool) Set(s string) error {
	switch strings.ToLower(s) {
	case "on", "true", "1", "yes":
		*b.v = true
	case "off", "false", "0", "no":
		*b.v = false
	default:
		return fmt.Errorf("want on or off")
	}
	return nil
}

// BoolFlag registers a sysbench-style boolean option.
func BoolFlag(fs *pflag.FlagSet, v *bool, name string, def bool, usage string) {
	*v = def
	fs.Var(sbBool{v}, name, usage)
	fs.Lookup(name).NoOptDefVal = "on"
}

// sbSize is a size option as sysbench reads one: bytes with an optional
// binary suffix (b, K, M, G, T; 1K = 1024), e.g. --file-total-size 2G.
type sbSize struct{ v *int64 }

func (s sbSize) Type() string { return "size" }

func (s sbSize) String() string {
	if s.v == nil {
		return "0"
	}
	return FormatSize(*s.v)
}

func (s sbSize) Set(v string) error {
	n, err := ParseSize(v)
	if err != nil {
		return err
	}
	*s.v = n
	return nil
}

// SizeFlag registers a sysbench-style size option.
func SizeFlag(fs *pflag.FlagSet, v *int64, name string, def int64, usage string) {
	*v = def
	fs.Var(sbSize{v}, name, usage)
}

// ParseSize reads a sysbench size: digits and an optional suffix b, k, m,
// g or t (case-insensitive, powers of 1024).
func ParseSize(v string) (int64, error) {
	s := strings.TrimSpace(v)
	mult := int64(1)
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'b', 'B':
			s = s[:n-1]
		case 'k', 'K':
			mult, s = 1<<10, s[:n-1]
		case 'm', 'M':
			mult, s = 1<<20, s[:n-1]
		case 'g', 'G':
			mult, s = 1<<30, s[:n-1]
		case 't', 'T':
			mult, s = 1<<40, s[:n-1]
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("want a size such as 16384, 16K, 2G")
	}
	return n * mult, nil
}

// FormatSize is the shortest exact form of n: 2G, 16K, 1000.
func FormatSize(n int64) string {
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if n != 0 && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

// SeedOrClock is a workload's random seed: --rand-seed, or the clock when
// it is 0 (sysbench's rule).
func SeedOrClock(seed uint64) uint64 {
	if seed == 0 {
		return uint64(time.Now().UnixNano())
	}
	return seed
}

// LookupInt reads an option another family bound to fs (TPC-C and
// MongoDB's workloads share sysbench's core options, which the OLTP family
// binds); ok is false when fs has no such flag.
func LookupInt(fs *pflag.FlagSet, name string) (v int, ok bool, err error) {
	f := fs.Lookup(name)
	if f == nil {
		return 0, false, nil
	}
	v, err = strconv.Atoi(f.Value.String())
	if err != nil {
		return 0, true, fmt.Errorf("--%s: %v", name, err)
	}
	return v, true, nil
}

// LookupUint64 is LookupInt for unsigned options (--rand-seed); 0 when
// fs has no such flag or it does not parse.
func LookupUint64(fs *pflag.FlagSet, name string) uint64 {
	if f := fs.Lookup(name); f != nil {
		if v, err := strconv.ParseUint(f.Value.String(), 10, 64); err == nil {
			return v
		}
	}
	return 0
}

// NumberedPlaceholders turns ? placeholders into PostgreSQL's $1, $2, ...
// (for statements that hold no ? inside a literal).
func NumberedPlaceholders(q string) string {
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
