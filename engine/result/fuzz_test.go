package result

import (
	"os"
	"path/filepath"
	"testing"
)

// Result files read by report and compare: hostile or truncated JSON, wrong
// types, a future schema: read or refused, never a panic.
func FuzzReadFile(f *testing.F) {
	for _, s := range []string{`{"schema_version":1}`, `{"schema_version":99}`, `{"schema_version":1,"runs":[{"point":7,"block":-1}]}`,
		`{"schema_version":"1"}`, `[`, ``, `{"schema_version":1,"plan":{"points":[]},"runs":[{"intervals":[{}]}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "r.json")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := ReadFile(p)
		if err == nil {
			r.Clone()
			r.TargetNames()
			r.CompleteBlocks(0)
		}
	})
}
