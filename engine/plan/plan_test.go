package plan

import (
	"reflect"
	"testing"
)

func TestEachBlockHoldsEachTargetOnce(t *testing.T) {
	targets := []string{"native", "container", "tuned"}
	p := New(targets, 2, 5, 1, 42)
	if len(p.Blocks) != 12 || p.TotalRuns() != 36 {
		t.Fatalf("blocks %d runs %d", len(p.Blocks), p.TotalRuns())
	}
	shuffled := false
	for i, b := range p.Blocks {
		seen := map[string]int{}
		for _, n := range b.Order {
			seen[n]++
		}
		for _, n := range targets {
			if seen[n] != 1 {
				t.Fatalf("block %d runs %s %d times: %v", i, n, seen[n], b.Order)
			}
		}
		if !reflect.DeepEqual(b.Order, targets) {
			shuffled = true
		}
		if b.Seq != i+1 {
			t.Fatalf("seq %d at %d", b.Seq, i)
		}
	}
	if !shuffled {
		t.Fatal("orders are never shuffled")
	}
	if !p.Blocks[0].Warmup || p.Blocks[1].Warmup || p.Blocks[1].Index != 1 || p.Blocks[5].Index != 5 || p.Blocks[6].Point != 1 {
		t.Fatalf("warm-up/index/point layout wrong: %+v", p.Blocks[:7])
	}
}

func TestSeededAndSingleRunKeepsOrder(t *testing.T) {
	a := New([]string{"a", "b", "c"}, 1, 4, 0, 7)
	b := New([]string{"a", "b", "c"}, 1, 4, 0, 7)
	if !reflect.DeepEqual(a.Orders(), b.Orders()) {
		t.Fatal("same seed, different order")
	}
	one := New([]string{"a", "b"}, 1, 1, 0, 99)
	if !reflect.DeepEqual(one.Orders(), [][]string{{"a", "b"}}) {
		t.Fatalf("single run must keep the baseline first: %v", one.Orders())
	}
}

func TestParseList(t *testing.T) {
	l, err := ParseList("threads", "10, 32,64")
	if err != nil || !reflect.DeepEqual(l, []int{10, 32, 64}) {
		t.Fatalf("%v %v", l, err)
	}
	for _, bad := range []string{"", "a", "0", "4,-1"} {
		if _, err := ParseList("threads", bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// Williams rows: each row holds each treatment once, and over the rows
// every ordered pair (a then b) is adjacent equally often.
func TestWilliamsRowsBalanceCarryOver(t *testing.T) {
	for k := 1; k <= 7; k++ {
		rows := WilliamsRows(k)
		adj := map[[2]int]int{}
		for _, row := range rows {
			seen := map[int]bool{}
			for j, x := range row {
				if x < 0 || x >= k || seen[x] {
					t.Fatalf("k=%d: row %v", k, row)
				}
				seen[x] = true
				if j > 0 {
					adj[[2]int{row[j-1], x}]++
				}
			}
		}
		want := -1
		for a := range k {
			for b := range k {
				if a == b {
					continue
				}
				if want < 0 {
					want = adj[[2]int{a, b}]
				}
				if adj[[2]int{a, b}] != want || want == 0 {
					t.Fatalf("k=%d: %d→%d adjacent %d times, others %d (rows %v)", k, a, b, adj[[2]int{a, b}], want, rows)
				}
			}
		}
	}
}
