// Package specs reads what users write: a target's NAME=SPEC, a SPEC's
// HEAD,key=value list and its checks (cpusets, cnf files), server URLs of
// any registered protocol; what is wrong is a UsageError (exit code 2).
package specs

import (
	"net"
	"net/url"
	"regexp"

	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/dbduel/dbduel/engine/driver"
)

// KV is one key=value of a SPEC, in the order given.
type KV struct{ Key, Value string }

// SplitSpec splits "HEAD,k=v,k=\"v,with,commas\"" into HEAD and its keys.
// A value may be double-quoted to hold commas; keys are validated by the
// caller against its own list (unknown keys are usage errors).
func SplitSpec(spec string) (head string, kvs []KV, err error) {
	parts, err := splitUnquoted(spec)
	if err != nil {
		return "", nil, err
	}
	head = parts[0]
	for _, p := range parts[1:] {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return "", nil, usagef("SPEC item %q: want key=value", p)
		}
		if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
			v = v[1 : len(v)-1]
		}
		kvs = append(kvs, KV{Key: k, Value: v})
	}
	return head, kvs, nil
}

// splitUnquoted splits on commas outside double quotes.
func splitUnquoted(s string) ([]string, error) {
	var parts []string
	var cur strings.Builder
	quoted := false
	for _, c := range s {
		switch {
		case c == '"':
			quoted = !quoted
			cur.WriteRune(c)
		case c == ',' && !quoted:
			parts = append(parts, cur.String())
			cur.Reset()
		default:
			cur.WriteRune(c)
		}
	}
	if quoted {
		return nil, usagef("SPEC %q has an unclosed double quote", s)
	}
	return append(parts, cur.String()), nil
}

// CheckKeys rejects keys outside allowed and repeats of non-repeatable keys.
func CheckKeys(kind string, kvs []KV, allowed map[string]bool, repeatable map[string]bool) error {
	seen := map[string]bool{}
	for _, kv := range kvs {
		if !allowed[kv.Key] {
			var keys []string
			for k := range allowed {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			return usagef("%s SPEC: unknown key %q (known: %s)", kind, kv.Key, strings.Join(keys, ", "))
		}
		if seen[kv.Key] && !repeatable[kv.Key] {
			return usagef("%s SPEC: key %q given twice", kind, kv.Key)
		}
		seen[kv.Key] = true
	}
	return nil
}

// ParseCPUList parses CPU lists such as 0, 0-1 or 0,2 (taskset, Docker
// and /sys/devices/system/cpu/online syntax).
func ParseCPUList(s string) ([]int, bool) {
	if strings.TrimSpace(s) == "" {
		return nil, false
	}
	var cpus []int
	for _, part := range strings.Split(strings.TrimSpace(s), ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, false
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, false
			}
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus, true
}

// onlineCPUs is this machine's online CPU list ("0-1"); a variable so tests
// can pretend another machine.
var onlineCPUs = func() string {
	data, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return fmt.Sprintf("0-%d", runtime.NumCPU()-1)
	}
	return strings.TrimSpace(string(data))
}

// CheckCpuset checks a cpuset= value's syntax and that every CPU it names
// exists here (taskset and Docker would fail later, with less to go on).
func CheckCpuset(s string) error {
	cpus, ok := ParseCPUList(s)
	if !ok {
		return fmt.Errorf("cpuset=%q: want CPU numbers such as 0, 0-1 or 0,2", s)
	}
	online := onlineCPUs()
	have, _ := ParseCPUList(online)
	exists := map[int]bool{}
	for _, c := range have {
		exists[c] = true
	}
	for _, c := range cpus {
		if !exists[c] {
			return fmt.Errorf("cpuset=%s: CPU %d does not exist; this machine's CPUs are %s", s, c, online)
		}
	}
	return nil
}

// CheckCnf checks that a cnf= value is a readable file and returns its
// absolute path (a directory or an unreadable file must not be ignored).
func CheckCnf(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("cnf=%s: %v", path, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("cnf=%s: %v", path, err)
	}
	if st.IsDir() {
		return "", fmt.Errorf("cnf=%s is a directory: want a MySQL option file such as examples/tuned.cnf", path)
	}
	f, err := os.Open(abs)
	if err != nil {
		return "", fmt.Errorf("cnf=%s: %v", path, err)
	}
	f.Close()
	return abs, nil
}

// UsageError is a SPEC or flag the user got wrong (exit code 2).
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, args ...any) error { return &UsageError{Msg: fmt.Sprintf(format, args...)} }

var nameRE = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)

// SplitTargetFlag splits NAME=SPEC and checks NAME.
func SplitTargetFlag(s string) (name, spec string, err error) {
	name, spec, ok := strings.Cut(s, "=")
	if !ok || spec == "" {
		return "", "", usagef("--target %q: want NAME=SPEC, e.g. native=mysql://root:pw@127.0.0.1:3306/sbtest", Redact(s))
	}
	if !nameRE.MatchString(name) {
		return "", "", usagef("--target name %q: want [a-z][a-z0-9_-]*", name)
	}
	return name, spec, nil
}

// Redact hides a password in a SPEC (for messages).
func Redact(s string) string { return driver.RedactURL(s) }

// ParseURL parses a server URL of any registered protocol (usage errors).
func ParseURL(spec string) (driver.Endpoint, error) {
	p, err := driver.ForURL(spec)
	if err != nil {
		var hints []string
		for _, p := range driver.All() {
			if p.URLHint != "" {
				hints = append(hints, p.URLHint)
			}
		}
		return driver.Endpoint{}, &UsageError{Msg: fmt.Sprintf("SPEC %q: want %s", Redact(spec), strings.Join(hints, " or "))}
	}
	ep, err := p.ParseURL(spec)
	if err != nil {
		return ep, &UsageError{Msg: err.Error()}
	}
	return ep, nil
}

// HostOf is "local" for a loopback or unix-socket address (a server or an
// engine on this machine), else the address's host.
func HostOf(addr string) string {
	if strings.HasPrefix(addr, "ssh://") {
		if u, err := url.Parse(addr); err == nil {
			addr = u.Host
		}
	}
	addr = strings.TrimPrefix(strings.TrimPrefix(addr, "tcp://"), "unix://")
	if strings.HasPrefix(addr, "/") || addr == "" {
		return "local"
	}
	h := addr
	if hp, _, err := net.SplitHostPort(addr); err == nil {
		h = hp
	}
	if ip := net.ParseIP(h); (ip != nil && ip.IsLoopback()) || h == "localhost" {
		return "local"
	}
	return h
}
