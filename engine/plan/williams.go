package plan

// WilliamsRows are the rows of a Williams design for k treatments: run in
// turn, every treatment follows every other one equally often (each
// ordered pair is adjacent once per k rows for even k, twice per 2k rows
// for odd k, where each row's reverse is added). A shuffled order per
// round does not balance what one slice leaves to the next (a warm shared
// cache, the CPU's frequency); these rows do, within the rounds.
func WilliamsRows(k int) [][]int {
	if k <= 0 {
		return nil
	}
	first := make([]int, k)
	lo, hi := 1, k-1
	for i := 1; i < k; i++ { // 0, 1, k−1, 2, k−2, ...
		if i%2 == 1 {
			first[i], lo = lo, lo+1
		} else {
			first[i], hi = hi, hi-1
		}
	}
	rows := make([][]int, 0, 2*k)
	for shift := range k {
		row := make([]int, k)
		for j, x := range first {
			row[j] = (x + shift) % k
		}
		rows = append(rows, row)
	}
	if k%2 == 1 {
		for shift := range k {
			row := make([]int, k)
			for j := range row {
				row[j] = rows[shift][k-1-j]
			}
			rows = append(rows, row)
		}
	}
	return rows
}
