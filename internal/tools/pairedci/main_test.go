package main

import (
	"strings"
	"testing"
)

// dbduel at exactly 1.1× sysbench's QPS and 0.8×/0.9× its CPU in every pair:
// the geometric means are those ratios and the CI collapses onto them.
func TestSummarizeGivesPairedRatios(t *testing.T) {
	in := "100 110 10 8 20 18\n200 220 5 4 40 36\n\n50 55 8 6.4 10 9\n"
	got, err := summarize(strings.NewReader(in), []string{"QPS", "client CPU/q", "server CPU/q"}, "sysbench")
	if err != nil {
		t.Fatal(err)
	}
	want := "QPS 1.100 [1.100, 1.100]; client CPU/q 0.800 [0.800, 0.800]; server CPU/q 0.900 [0.900, 0.900]"
	if !strings.Contains(got, want) || !strings.Contains(got, "paired t on log-ratios") {
		t.Fatalf("got %q, want it to hold %q", got, want)
	}
}

func TestSummarizeRefusesShortLines(t *testing.T) {
	if _, err := summarize(strings.NewReader("1 2 3\n"), []string{"QPS", "client CPU/q", "server CPU/q"}, "sysbench"); err == nil || !strings.Contains(err.Error(), "want 6 numbers") {
		t.Fatalf("error %v", err)
	}
	if _, err := summarize(strings.NewReader("1 2 3 4 5 x\n"), []string{"QPS", "client CPU/q", "server CPU/q"}, "sysbench"); err == nil {
		t.Fatal("a non-number was accepted")
	}
}
