package stats

import (
	"fmt"
	"slices"

	"github.com/dbduel/dbduel/engine/result"
)

// DefaultAlpha is the family-wise level of the verdict words without --alpha.
const DefaultAlpha = 0.05

// Alpha is the family-wise level a result's verdict words were decided at.
func Alpha(r *result.Result) float64 {
	if r.Plan.Alpha > 0 {
		return r.Plan.Alpha
	}
	return DefaultAlpha
}

// inFamily says a comparison's verdict word is one of the plan's family:
// a primary metric, an interval, and 3 blocks or more (fewer give no word).
// The A/A copy is a check of the design, not a question asked.
func inFamily(c result.Comparison) bool {
	return c.Primary && c.HasCI && c.N >= 3 && !IsCalibration(c.Target) && c.PValue > 0
}

// holm decides the verdict words of a plan's primary comparisons (every
// target at every point) together, with Holm's step-down procedure at the
// family-wise α: with 8 comparisons and no true difference, a primary
// verdict word is printed in at most α of plans, not in a third of them
// (TestMultiplicitySimulation). Secondary metrics' words are not adjusted.
func holm(r *result.Result, all []scored) {
	var idx []int
	var ps []float64
	for i, sc := range all {
		if inFamily(sc.c) {
			idx, ps = append(idx, i), append(ps, sc.c.PValue)
		}
	}
	alpha := Alpha(r)
	for k, adj := range HolmAdjust(ps) {
		all[idx[k]].c.Family = &result.Family{Size: len(ps), Method: "holm", Alpha: alpha, PAdjusted: adj, Significant: adj <= alpha}
	}
}

// HolmAdjust is Holm's adjusted p-values, in the order given: the k-th
// smallest p becomes the largest of (m−j+1)·p_(j) over j ≤ k, at most 1.
// A comparison is significant at family-wise α when its adjusted p is at
// most α: the step-down procedure.
func HolmAdjust(ps []float64) []float64 {
	m := len(ps)
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case ps[a] < ps[b]:
			return -1
		case ps[a] > ps[b]:
			return 1
		}
		return 0
	})
	out := make([]float64, m)
	running := 0.0
	for j, i := range order {
		running = max(running, min(1, float64(m-j)*ps[i]))
		out[i] = running
	}
	return out
}

// FamilyLine is the line that says the verdict words were adjusted for
// multiplicity ("" when the family has fewer than 2 comparisons).
func FamilyLine(r *result.Result) string {
	for _, c := range r.Comparisons {
		if f := c.Family; f != nil && f.Size >= 2 {
			return fmt.Sprintf("%d comparisons, Holm-adjusted at α %g", f.Size, f.Alpha)
		}
	}
	return ""
}
