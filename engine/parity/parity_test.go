package parity

import (
	"fmt"
	"testing"
)

func TestParityListsOnlyConfigDifferences(t *testing.T) {
	vars := map[string]map[string]string{
		"native":    {"port": "3306", "datadir": "/a", "innodb_buffer_pool_size": "134217728", "character_set_server": "utf8mb4", "innodb_log_file_buffering": "OFF"},
		"container": {"port": "45000", "datadir": "/b", "innodb_buffer_pool_size": "134217728", "character_set_server": "latin1"},
	}
	p := Parity([]string{"native", "container"}, map[string]string{"native": "10.11.19", "container": "10.11.19"}, vars)
	if len(p.VariablesDiff) != 2 {
		t.Fatalf("want charset and the absent variable, got %+v", p.VariablesDiff)
	}
	if p.VariablesDiff[1].Name != "character_set_server" || p.VariablesDiff[0].Values["container"] != "(absent)" {
		t.Fatalf("%+v", p.VariablesDiff)
	}
}

// The variables that move performance come first, character sets last, and
// build facts are reported apart.
func TestParityRanksByLikelyEffect(t *testing.T) {
	a := map[string]string{"back_log": "80", "character_set_client": "latin1", "innodb_log_file_buffering": "OFF",
		"innodb_log_write_ahead_size": "4096", "innodb_flush_method": "O_DIRECT", "version_ssl_library": "OpenSSL 3.0.15",
		"max_connections": "151"}
	b := map[string]string{"back_log": "70", "character_set_client": "utf8mb4", "innodb_log_file_buffering": "ON",
		"innodb_log_write_ahead_size": "512", "innodb_flush_method": "fsync", "version_ssl_library": "OpenSSL 3.0.11",
		"max_connections": "200"}
	p := Parity([]string{"a", "b"}, nil, map[string]map[string]string{"a": a, "b": b})
	var names []string
	for _, d := range p.VariablesDiff {
		names = append(names, d.Name)
	}
	want := []string{"innodb_log_file_buffering", "innodb_log_write_ahead_size", "innodb_flush_method", "max_connections", "back_log", "character_set_client"}
	if fmt.Sprint(names) != fmt.Sprint(want) {
		t.Fatalf("order %v, want %v", names, want)
	}
	if len(p.BuildDiff) != 1 || p.BuildDiff[0].Name != "version_ssl_library" {
		t.Fatalf("build differences: %+v", p.BuildDiff)
	}
}
