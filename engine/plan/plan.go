// Package plan lays out a comparison: per sweep point, blocks that run
// every target once in a seeded shuffled order (never two targets at
// once), warm-up blocks first. What a point runs (its threads, its data)
// is the engine's Point; the plan knows points by index.
package plan

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Block runs every target once.
type Block struct {
	Seq    int // 1-based position in the whole plan
	Point  int // the sweep point's index
	Index  int // 1-based among the point's blocks of the same kind
	Warmup bool
	Order  []string
}

// Plan is the whole schedule.
type Plan struct {
	Points int // sweep points

	Runs       int
	WarmupRuns int
	Seed       int64
	Blocks     []Block
}

// New builds the plan of points sweep points. Points run in their order
// (callers sort them by table size so data is prepared once per size). A
// single block keeps the targets' order so a plain comparison runs the
// baseline first.
func New(targets []string, points, runs, warmupRuns int, seed int64) Plan {
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
