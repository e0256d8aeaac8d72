package main

import (
	"strings"
	"testing"
)

// Ratios 1.1/1.2/1.0 (QPS), 0.8/0.9/0.7 and 0.9 in every pair: geometric
// means with their paired t CIs; a ratio the same in every pair has no CI
// (a zero-width interval would claim a precision the pairs do not have).
func TestSummarizeGivesPairedRatios(t *testing.T) {
	in := "100 110 10 8 20 18\n200 240 5 4.5 40 36\n\n50 50 8 5.6 10 9\n"
	got, err := summarize(strings.NewReader(in), []string{"QPS", "client CPU/q", "server CPU/q"}, "sysbench")
	if err != nil {
		t.Fatal(err)
	}
	want := "QPS 1.097 [0.875, 1.376]; client CPU/q 0.796 [0.582, 1.088]; server CPU/q 0.900 (the same ratio in every block: no confidence interval"
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
