// Package plan lays out a comparison: sweep points (threads × table size),
// and per point blocks that run every target once in a seeded shuffled
// order (never two targets at once), warm-up blocks first.
package plan

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Point is one sweep point.
type Point struct {
	Threads   int
	TableSize int
}

func (p Point) String() string {
	return fmt.Sprintf("threads=%d table_size=%d", p.Threads, p.TableSize)
}

// Block runs every target once.
type Block struct {
	Seq    int // 1-based position in the whole plan
	Point  int // index into Plan.Points
	Index  int // 1-based among the point's blocks of the same kind
	Warmup bool
	Order  []string
}

// Plan is the whole schedule.
type Plan struct {
	Points     []Point
	Runs       int
	WarmupRuns int
	Seed       int64
	Blocks     []Block
}

// New builds the plan. Points run in the given order (callers sort by
// table size so data is prepared once per size). A single block keeps the
// targets' order so a plain comparison runs the baseline first.
func New(targets []string, points []Point, runs, warmupRuns int, seed int64) Plan {
	p := Plan{Points: points, Runs: runs, WarmupRuns: warmupRuns, Seed: seed}
	rng := rand.New(rand.NewPCG(uint64(seed), 0xdbd0e1))
	shuffle := runs+warmupRuns > 1
	for pi := range points {
		for k := 0; k < warmupRuns+runs; k++ {
			order := append([]string(nil), targets...)
			if shuffle {
				rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
			}
			b := Block{Seq: len(p.Blocks) + 1, Point: pi, Warmup: k < warmupRuns, Order: order}
			b.Index = k + 1
			if !b.Warmup {
				b.Index = k - warmupRuns + 1
			}
			p.Blocks = append(p.Blocks, b)
		}
	}
	return p
}

// TotalRuns is the number of runs the plan makes.
func (p Plan) TotalRuns() int {
	n := 0
	for _, b := range p.Blocks {
		n += len(b.Order)
	}
	return n
}

// Orders lists the blocks' target orders (the result's plan.blocks).
func (p Plan) Orders() [][]string {
	out := make([][]string, len(p.Blocks))
	for i, b := range p.Blocks {
		out[i] = b.Order
	}
	return out
}

// ParseList parses "8" or "10,32,64" into positive integers.
func ParseList(flag, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--%s %q: want a positive number or a comma-separated list such as 10,32,64", flag, s)
		}
		out = append(out, n)
	}
	return out, nil
}

// Sweep is every combination of table sizes and thread counts, sizes outer.
func Sweep(threads, sizes []int) []Point {
	var pts []Point
	for _, s := range sizes {
		for _, t := range threads {
			pts = append(pts, Point{Threads: t, TableSize: s})
		}
	}
	return pts
}
