package targets

import (
	"sort"

	"github.com/dbduel/dbduel/engine/result"
)

// placeVariables differ between any two servers by where they run, not by
// how they are configured: their difference says nothing about performance.
var placeVariables = map[string]bool{
	"hostname": true, "port": true, "socket": true, "pid_file": true, "datadir": true, "server_uuid": true,
	"bind_address": true, "log_error": true, "general_log_file": true, "slow_query_log_file": true,
	"innodb_data_home_dir": true, "innodb_log_group_home_dir": true, "innodb_undo_directory": true,
	"innodb_tmpdir": true, "tmpdir": true, "log_bin_basename": true, "log_bin_index": true, "relay_log_basename": true,
	"relay_log_index": true, "gtid_binlog_pos": true, "gtid_binlog_state": true, "gtid_current_pos": true,
	"timestamp": true, "system_time_zone": true, "secure_file_priv": true, "plugin_dir": true,
	"wsrep_node_name": true, "report_host": true, "report_port": true, "extra_port": true,
	"version_compile_os": true, "version_source_revision": true, "innodb_buffer_pool_filename": true,
	"lc_messages_dir": true, "character_sets_dir": true, "basedir": true, "aria_log_dir_path": true,
	"log_slow_query_file": true, "wsrep_data_home_dir": true, "server_uid": true,
}

// Parity compares what the targets run: versions and every global variable
// whose values differ (place-bound ones left out).
func Parity(names []string, versions map[string]string, vars map[string]map[string]string) *result.Parity {
	p := &result.Parity{Versions: versions}
	keys := map[string]bool{}
	for _, n := range names {
		for k := range vars[n] {
			keys[k] = true
		}
	}
	var sorted []string
	for k := range keys {
		if !placeVariables[k] {
			sorted = append(sorted, k)
		}
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		values := map[string]string{}
		distinct := map[string]bool{}
		for _, n := range names {
			v, ok := vars[n][k]
			if !ok {
				v = "(absent)"
			}
			values[n] = v
			distinct[v] = true
		}
		if len(distinct) > 1 {
			p.VariablesDiff = append(p.VariablesDiff, result.VariableDiff{Name: k, Values: values})
		}
	}
	return p
}
