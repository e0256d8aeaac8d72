package stats

import "testing"

// --fail-if expressions: anything is parsed or refused with an error, never
// a panic; what parses names one of the metrics.
func FuzzParseThreshold(f *testing.F) {
	for _, s := range []string{"tps<-5%", "p95>+10%", "nopm<-2.5%", "tps", "", "qps<%", "tps<-1e309%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		th, err := ParseThreshold(s)
		if err == nil && th.Metric == "" {
			t.Fatalf("%q parsed without a metric", s)
		}
	})
}
