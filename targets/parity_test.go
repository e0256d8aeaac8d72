package targets

import "testing"

func TestParityListsOnlyConfigDifferences(t *testing.T) {
	vars := map[string]map[string]string{
		"native":    {"port": "3306", "datadir": "/a", "innodb_buffer_pool_size": "134217728", "character_set_server": "utf8mb4", "innodb_log_file_buffering": "OFF"},
		"container": {"port": "45000", "datadir": "/b", "innodb_buffer_pool_size": "134217728", "character_set_server": "latin1"},
	}
	p := Parity([]string{"native", "container"}, map[string]string{"native": "10.11.19", "container": "10.11.19"}, vars)
	if len(p.VariablesDiff) != 2 {
		t.Fatalf("want charset and the absent variable, got %+v", p.VariablesDiff)
	}
	if p.VariablesDiff[0].Name != "character_set_server" || p.VariablesDiff[1].Values["container"] != "(absent)" {
		t.Fatalf("%+v", p.VariablesDiff)
	}
}
