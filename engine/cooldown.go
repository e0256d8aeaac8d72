package engine

import (
	"context"
	"os"
	"strconv"
	"strings"
	"time"
)

// cooldown pauses between runs: d >= 0 waits d; d < 0 waits until the host
// is idle (two quarter-second windows under 20% CPU) or 10 s, whichever
// comes first, so a write-heavy run's purge does not steal CPU from the next.
func cooldown(ctx context.Context, d time.Duration) {
	if d >= 0 {
		sleepCtx(ctx, d)
		return
	}
	deadline := time.Now().Add(10 * time.Second)
	quiet := 0
	prevBusy, prevTotal, ok := readCPU()
	for ok && quiet < 2 && time.Now().Before(deadline) {
		if !sleepCtx(ctx, 250*time.Millisecond) {
			return
		}
		busy, total, ok2 := readCPU()
		if !ok2 || total == prevTotal {
			return
		}
		if float64(busy-prevBusy)/float64(total-prevTotal) < 0.20 {
			quiet++
		} else {
			quiet = 0
		}
		prevBusy, prevTotal = busy, total
	}
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// readCPU returns busy and total jiffies of the host from /proc/stat.
func readCPU() (busy, total uint64, ok bool) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return 0, 0, false
	}
	for i, v := range f[1:] {
		n, _ := strconv.ParseUint(v, 10, 64)
		total += n
		if i != 3 && i != 4 { // idle and iowait
			busy += n
		}
	}
	return busy, total, true
}
