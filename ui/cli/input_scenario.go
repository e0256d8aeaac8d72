package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/spf13/pflag"
)

// A scenario file (dbduel run -f FILE.yaml) writes a run's flags down once:
//
//	workload: oltp_read_write
//	targets:
//	  - native=local:mariadbd
//	  - docker=docker:${IMAGE:-dbduel-test/mariadb:10.11.19},memory=2g
//	options:            # the workload's options, by sysbench's names
//	  tables: 20
//	  table_size: 10000
//	plan:               # dbduel's plan and output flags, by their names
//	  runs: 4
//	  threads: [10, 32]
//	  fail_if: ["tps<-5%"]
//	  out: seed000.json
//
// Every key is a flag of `dbduel run` (underscores or dashes), so the file
// and the command line cannot mean different things; flags given on the
// command line override the file's values. ${VAR} and ${VAR:-default}
// expand from the environment, as in compose files.
type scenario struct {
	hidden   []string // the values the environment put in: never in an error
	path     string
	workload string
	targets  []string
	flags    []scenarioFlag // in file order
}

type scenarioFlag struct {
	name   string
	values []string // one value, or several for a list (joined or repeated per the flag's kind)
	line   int
	column int
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// expandEnv replaces ${VAR} and ${VAR:-default}; an unset ${VAR} without a
// default is an error (a silently empty image name helps nobody).
func expandEnv(text string, lookup func(string) (string, bool)) (string, error) {
	out, _, err := expandEnvValues(text, lookup)
	return out, err
}

// expandEnvValues is expandEnv, and the values it put in from the
// environment: a password given as ${DBPW} must not reach an error.
func expandEnvValues(text string, lookup func(string) (string, bool)) (string, []string, error) {
	var missing, values []string
	out := envRef.ReplaceAllStringFunc(text, func(m string) string {
		g := envRef.FindStringSubmatch(m)
		if v, ok := lookup(g[1]); ok && (v != "" || g[2] == "") {
			values = append(values, v)
			return v
		}
		if g[2] != "" {
			return g[3]
		}
		missing = append(missing, g[1])
		return ""
	})
	if len(missing) > 0 {
		return "", nil, fmt.Errorf("${%s} is not set and has no default (${%s:-default})", missing[0], missing[0])
	}
	return out, values, nil
}

// hidingValues says an error without the values the environment put into
// the file (those of 4 characters or more: a short one, a thread count,
// is no secret, and hiding it would garble the message's positions).
func hidingValues(err error, values []string) error {
	if err == nil {
		return nil
	}
	msg := driver.Redact(err.Error())
	for _, v := range values {
		if len(v) >= 4 {
			msg = strings.ReplaceAll(msg, v, "***")
		}
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return &exitError{code: ee.code, err: errors.New(msg)}
	}
	return errors.New(msg)
}

// loadScenario reads and checks a scenario file against dbduel run's
// flags; its errors never show what the environment put into it.
func loadScenario(path string, lookup func(string) (string, bool)) (*scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usageErr("-f %s: %v", path, err)
	}
	text, values, err := expandEnvValues(string(data), lookup)
	if err != nil {
		return nil, usageErr("%s: %v", path, err)
	}
	sc, err := parseScenario(path, text)
	if err != nil {
		return nil, hidingValues(err, values)
	}
	sc.hidden = values
	return sc, nil
}

// parseScenario reads a scenario's expanded text.
func parseScenario(path, text string) (*scenario, error) {
	file, err := parser.ParseBytes([]byte(text), 0)
	if err != nil {
		return nil, usageErr("%s: %s", path, oneLineYAMLError(err))
	}
	if len(file.Docs) == 0 || file.Docs[0].Body == nil {
		return nil, usageErr("%s: the file is empty", path)
	}
	top, ok := file.Docs[0].Body.(*ast.MappingNode)
	if !ok {
		return nil, (&scenario{path: path}).errAt(file.Docs[0].Body, "want a mapping with workload, targets, options and plan")
	}
	return scenarioFromNode(path, top)
}

// scenarioFromNode reads workload, targets, options and plan from a mapping
// (a scenario file's top level, or a compose file's x-dbduel block).
func scenarioFromNode(path string, top *ast.MappingNode) (*scenario, error) {
	sc := &scenario{path: path}
	fs := runFlagSet()
	for _, kv := range top.Values {
		key := kv.Key.String()
		switch key {
		case "workload":
			s, ok := scalar(kv.Value)
			if !ok {
				return nil, sc.errAt(kv.Value, "workload: want a name such as oltp_read_write")
			}
			sc.workload = s
		case "targets":
			seq, ok := kv.Value.(*ast.SequenceNode)
			if !ok {
				return nil, sc.errAt(kv.Value, "targets: want a list of NAME=SPEC")
			}
			for _, item := range seq.Values {
				s, ok := scalar(item)
				if !ok || !strings.Contains(s, "=") {
					return nil, sc.errAt(item, "targets: want NAME=SPEC, e.g. native=local:mariadbd")
				}
				sc.targets = append(sc.targets, s)
			}
		case "options", "plan":
			m, ok := kv.Value.(*ast.MappingNode)
			if !ok {
				return nil, sc.errAt(kv.Value, key+": want a mapping of option names to values")
			}
			for _, o := range m.Values {
				if err := sc.addFlag(o, fs); err != nil {
					return nil, err
				}
			}
		default:
			return nil, sc.errAt(kv.Key, fmt.Sprintf("unknown key %q (want workload, targets, options or plan)", key))
		}
	}
	return sc, nil
}

func (sc *scenario) addFlag(kv *ast.MappingValueNode, fs *pflag.FlagSet) error {
	name := strings.ReplaceAll(kv.Key.String(), "_", "-")
	f := fs.Lookup(name)
	if f == nil || f.Hidden || name == "target" || name == "file" {
		return sc.errAt(kv.Key, fmt.Sprintf("unknown option %q (not a flag of dbduel run)", kv.Key.String()))
	}
	tok := kv.Key.GetToken()
	sf := scenarioFlag{name: name, line: tok.Position.Line, column: tok.Position.Column}
	if seq, ok := kv.Value.(*ast.SequenceNode); ok {
		for _, item := range seq.Values {
			s, ok := scalar(item)
			if !ok {
				return sc.errAt(item, name+": want a value")
			}
			sf.values = append(sf.values, s)
		}
	} else {
		s, ok := scalar(kv.Value)
		if !ok {
			return sc.errAt(kv.Value, name+": want a value or a list of values")
		}
		sf.values = []string{s}
	}
	// Check the value now, on a flag set of its own, so that the error can
	// point at the file.
	probe := runFlagSet()
	for _, v := range sf.joined(f) {
		if err := probe.Set(f.Name, v); err != nil {
			return sc.errAt(kv.Value, fmt.Sprintf("%s: %v", kv.Key.String(), err))
		}
	}
	sc.flags = append(sc.flags, sf)
	return nil
}

// joined is how the values reach the flag: repeatable flags take each value,
// list flags (threads, table-size) one comma-separated value.
func (sf scenarioFlag) joined(f *pflag.Flag) []string {
	if strings.HasSuffix(f.Value.Type(), "Array") {
		return sf.values
	}
	return []string{strings.Join(sf.values, ",")}
}

// apply sets every flag of fs the command line did not set; dbduel run's
// flags that fs lacks (a plan's runs, read by dbduel live) are named in a
// note on stderr and left out.
func (sc *scenario) apply(fs *pflag.FlagSet, stderr io.Writer) error {
	var other []string
	defer func() {
		if len(other) > 0 {
			fmt.Fprintf(stderr, "dbduel: %s: %s do not apply to %s (dbduel run's plan): left out\n", sc.path, strings.Join(other, ", "), fs.Name())
		}
	}()
	for _, sf := range sc.flags {
		f := fs.Lookup(sf.name)
		if f == nil {
			other = append(other, sf.name)
			continue
		}
		if f.Changed {
			continue // the command line wins
		}
		for _, v := range sf.joined(f) {
			if err := fs.Set(sf.name, v); err != nil {
				return hidingValues(usageErr("%s:%d:%d: %s: %v", sc.path, sf.line, sf.column, sf.name, err), sc.hidden)
			}
		}
	}
	return nil
}

// runFlagSet is dbduel run's flags: every scenario key is one of them.
func runFlagSet() *pflag.FlagSet {
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	bindRunFlags(fs, &runOptions{})
	return fs
}

func (sc *scenario) errAt(n ast.Node, msg string) error {
	p := n.GetToken().Position
	return usageErr("%s:%d:%d: %s", sc.path, p.Line, p.Column, msg)
}

// scalar is a node's text, for scalars only.
func scalar(n ast.Node) (string, bool) {
	switch v := n.(type) {
	case *ast.StringNode:
		return v.Value, true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode:
		return strings.TrimSpace(v.String()), true
	case *ast.LiteralNode:
		return strings.TrimSpace(v.Value.Value), true
	}
	return "", false
}

func oneLineYAMLError(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }
