// Package parity compares what the targets of a run are: their server
// versions and settings, the differences that move performance first.
package parity

import (
	"sort"
	"strings"

	"github.com/dbduel/dbduel/engine/result"
)

// placeVariables differ between any two servers by where they run, not by
// how they are configured: their difference says nothing about performance.
var placeVariables = map[string]bool{
	"hostname": true, "port": true, "socket": true, "pid_file": true, "datadir": true, "server_uuid": true,
	"bind_address": true, "log_error": true, "general_log_file": true, "slow_query_log_file": true,
	"innodb_data_home_dir": true, "innodb_log_group_home_dir": true, "innodb_undo_directory": true,
	"innodb_tmpdir": true, "tmpdir": true, "slave_load_tmpdir": true, "init_file": true, "log_bin_basename": true, "log_bin_index": true, "relay_log_basename": true,
	"relay_log_index": true, "gtid_binlog_pos": true, "gtid_binlog_state": true, "gtid_current_pos": true,
	"timestamp": true, "system_time_zone": true, "secure_file_priv": true, "plugin_dir": true,
	"wsrep_node_name": true, "report_host": true, "report_port": true, "extra_port": true,
	"version_compile_os": true, "version_source_revision": true, "innodb_buffer_pool_filename": true,
	"lc_messages_dir": true, "character_sets_dir": true, "basedir": true, "aria_log_dir_path": true,
	"log_slow_query_file": true, "wsrep_data_home_dir": true, "server_uid": true,
	// PostgreSQL's
	"data_directory": true, "config_file": true, "hba_file": true, "ident_file": true, "external_pid_file": true,
	"unix_socket_directories": true, "listen_addresses": true, "cluster_name": true,
}

// Parity compares what the targets run: versions and every global variable
// whose values differ (place-bound ones left out).
func Parity(names []string, versions map[string]string, vars map[string]map[string]string) *result.Parity {
	p := &result.Parity{Versions: versions, VariablesDiff: []result.VariableDiff{}}
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
	// The ones most likely to move performance first, so that a screen
	// showing a few shows those; alphabetical within a rank.
	sort.Slice(sorted, func(i, j int) bool {
		ri, rj := EffectRank(sorted[i]), EffectRank(sorted[j])
		if ri != rj {
			return ri < rj
		}
		return sorted[i] < sorted[j]
	})
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
		if len(distinct) <= 1 {
			continue
		}
		d := result.VariableDiff{Name: k, Values: values, Rank: EffectRank(k)}
		if IsBuildVariable(k) {
			p.BuildDiff = append(p.BuildDiff, d)
		} else {
			p.VariablesDiff = append(p.VariablesDiff, d)
		}
	}
	return p
}

// IsBuildVariable says a variable describes how the server was built (its
// TLS library, compiler, malloc), not how it is configured: a difference
// there is a build difference, reported apart.
func IsBuildVariable(name string) bool {
	return strings.HasPrefix(name, "version") || strings.HasPrefix(name, "have_")
}

// EffectRank orders configuration variables by their likely effect on a
// benchmark: 0 memory and log sizes, 1 flushing, durability and I/O
// methods, 2 concurrency and caches, 3 everything else, 4 character sets,
// collations and other text-shaping settings.
func EffectRank(name string) int {
	contains := func(parts ...string) bool {
		for _, p := range parts {
			if strings.Contains(name, p) {
				return true
			}
		}
		return false
	}
	switch {
	case contains("buffer_pool_size", "log_file_size", "log_buffer_size", "buffer_pool_instances", "key_buffer_size",
		"tmp_table_size", "max_heap_table_size", "innodb_log_file_buffering", "innodb_log_write_ahead_size"):
		return 0
	case contains("flush", "sync_binlog", "doublewrite", "io_capacity", "io_threads", "native_aio", "use_native_aio",
		"log_bin", "binlog_format", "durab", "innodb_log_", "fsync", "direct", "checksum"):
		return 1
	case contains("thread", "max_connections", "table_open_cache", "table_definition_cache", "query_cache",
		"performance_schema", "adaptive", "_cache_size", "buffer_size", "concurrency", "spin"):
		return 2
	case contains("character_set", "collation", "lc_", "time_zone", "sql_mode", "date_format", "time_format"):
		return 4
	}
	return 3
}
