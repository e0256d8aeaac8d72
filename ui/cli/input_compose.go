package cli

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// composeImport is what a compose file gives a run: one docker: target per
// service, in order, an optional x-dbduel block (workload, options, plan,
// as in a scenario file), and what dbduel could not honour, named.
type composeImport struct {
	targets  []string
	scenario *scenario // from x-dbduel, nil without one
	notes    []string
}

// datadirs are where the images dbduel runs keep their data.
var datadirs = map[string]bool{"/var/lib/mysql": true, "/var/lib/postgresql/data": true, "/data/db": true}

// loadCompose turns compose services into container targets with
// compose-go (the compose specification's own loader).
func loadCompose(ctx context.Context, path string, only []string, environ []string) (*composeImport, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usageErr("--compose %s: %v", path, err)
	}
	abs, _ := filepath.Abs(path)
	project, err := loader.LoadWithContext(ctx, types.ConfigDetails{
		WorkingDir:  filepath.Dir(abs),
		ConfigFiles: []types.ConfigFile{{Filename: abs, Content: data}},
		Environment: types.NewMapping(environ),
	}, func(o *loader.Options) { o.SetProjectName("dbduel", true) })
	if err != nil {
		return nil, usageErr("--compose %s: %s", path, oneLineYAMLError(err))
	}
	order, xdbduel, keys, err := composeLayout(path, data, environ)
	if err != nil {
		return nil, err
	}
	run := order
	if len(only) > 0 {
		run = only
	}
	ci := &composeImport{}
	for _, name := range run {
		svc, ok := project.Services[name]
		if !ok {
			return nil, usageErr("--service %s: no such service in %s (it has %s)", name, path, strings.Join(serviceNames(order, project), ", "))
		}
		spec, notes, err := serviceSpec(svc)
		if err != nil {
			return nil, usageErr("%s: service %s: %v", path, name, err)
		}
		for _, k := range keys[name] {
			if !honouredKeys[k] {
				notes = append(notes, k+" is not honoured")
			}
		}
		ci.targets = append(ci.targets, targetName(name)+"="+spec)
		for _, n := range notes {
			ci.notes = append(ci.notes, fmt.Sprintf("service %s: %s", name, n))
		}
	}
	if xdbduel != nil {
		sc, err := scenarioFromNode(path, xdbduel)
		if err != nil {
			return nil, err
		}
		ci.scenario = sc
	}
	return ci, nil
}

// composeLayout reads the services' order (compose-go keeps them in a map)
// and the x-dbduel block from the file itself.
func composeLayout(path string, data []byte, environ []string) ([]string, *ast.MappingNode, map[string][]string, error) {
	text, err := expandEnv(string(data), lookupIn(environ))
	if err != nil {
		return nil, nil, nil, usageErr("%s: %v", path, err)
	}
	file, err := parser.ParseBytes([]byte(text), 0)
	if err != nil || len(file.Docs) == 0 {
		return nil, nil, nil, usageErr("%s: not a compose file", path)
	}
	top, ok := file.Docs[0].Body.(*ast.MappingNode)
	if !ok {
		return nil, nil, nil, usageErr("%s: not a compose file", path)
	}
	var order []string
	var x *ast.MappingNode
	keys := map[string][]string{}
	for _, kv := range top.Values {
		switch kv.Key.String() {
		case "services":
			if m, ok := kv.Value.(*ast.MappingNode); ok {
				for _, s := range m.Values {
					order = append(order, s.Key.String())
					if sm, ok := s.Value.(*ast.MappingNode); ok {
						for _, k := range sm.Values {
							keys[s.Key.String()] = append(keys[s.Key.String()], k.Key.String())
						}
					}
				}
			}
		case "x-dbduel":
			m, ok := kv.Value.(*ast.MappingNode)
			if !ok {
				p := kv.Value.GetToken().Position
				return nil, nil, nil, usageErr("%s:%d:%d: x-dbduel: want a mapping with workload, options and plan", path, p.Line, p.Column)
			}
			x = m
		}
	}
	return order, x, keys, nil
}

func serviceNames(order []string, p *types.Project) []string {
	if len(order) > 0 {
		return order
	}
	var names []string
	for n := range p.Services {
		names = append(names, n)
	}
	return names
}

// targetName makes a compose service name a dbduel target name.
func targetName(service string) string {
	n := strings.ToLower(strings.NewReplacer(".", "-", " ", "-").Replace(service))
	if n == "" || n[0] < 'a' || n[0] > 'z' {
		n = "s-" + n
	}
	return n
}

// honouredKeys are the service keys dbduel turns into SPEC keys (or
// rewrites, saying how); every other key in the file is named as not
// honoured, as written there.
var honouredKeys = map[string]bool{"image": true, "mem_limit": true, "cpus": true, "cpuset": true, "deploy": true,
	"network_mode": true, "environment": true, "command": true, "volumes": true, "ports": true, "shm_size": true,
	"ulimits": true, "container_name": true}

// serviceSpec is a service as a docker: SPEC, and what it could not honour.
func serviceSpec(svc types.ServiceConfig) (string, []string, error) {
	if svc.Image == "" {
		return "", nil, fmt.Errorf("no image: (dbduel runs images; build one and name it)")
	}
	parts := []string{"docker:" + svc.Image}
	var notes []string
	memory := int64(svc.MemLimit)
	cpus := float64(svc.CPUS)
	if d := svc.Deploy; d != nil && d.Resources.Limits != nil {
		if m := int64(d.Resources.Limits.MemoryBytes); m > 0 {
			memory = m
		}
		if c := float64(d.Resources.Limits.NanoCPUs); c > 0 {
			cpus = c
		}
	}
	if memory > 0 {
		parts = append(parts, fmt.Sprintf("memory=%d", memory))
	}
	if cpus > 0 {
		parts = append(parts, fmt.Sprintf("cpus=%g", cpus))
	}
	if svc.CPUSet != "" {
		parts = append(parts, "cpuset="+svc.CPUSet)
	}
	if svc.ShmSize > 0 {
		parts = append(parts, fmt.Sprintf("shm=%d", int64(svc.ShmSize)))
	}
	for _, name := range slices.Sorted(maps.Keys(svc.Ulimits)) {
		u := svc.Ulimits[name]
		soft, hard := u.Soft, u.Hard
		if u.Single > 0 {
			soft, hard = u.Single, u.Single
		}
		parts = append(parts, fmt.Sprintf("ulimit=%s=%d:%d", name, soft, hard))
	}
	switch svc.NetworkMode {
	case "", "bridge", "default":
	case "host":
		parts = append(parts, "network=host")
	default:
		notes = append(notes, fmt.Sprintf("network_mode %q is not honoured (dbduel uses bridge or host)", svc.NetworkMode))
	}
	for _, k := range sortedEnvKeys(svc.Environment) {
		if v := svc.Environment[k]; v != nil {
			parts = append(parts, quoteSpecValue("env="+k+"="+*v))
		}
	}
	for _, c := range svc.Command {
		if !strings.HasPrefix(c, "-") {
			notes = append(notes, fmt.Sprintf("command word %q is not honoured (dbduel passes server flags only)", c))
			continue
		}
		parts = append(parts, quoteSpecValue("args="+c))
	}
	for _, v := range svc.Volumes {
		switch {
		case strings.HasSuffix(v.Target, ".cnf") || strings.HasPrefix(v.Target, "/etc/mysql/conf.d/"):
			if v.Type != types.VolumeTypeBind {
				notes = append(notes, fmt.Sprintf("volume %s at %s: only a bind-mounted file can be a cnf", v.Source, v.Target))
				continue
			}
			parts = append(parts, "cnf="+v.Source)
		case datadirs[v.Target]:
			kind := "volume"
			if v.Type == types.VolumeTypeBind {
				kind = "bind"
			}
			parts = append(parts, "datadir="+kind)
			notes = append(notes, fmt.Sprintf("the datadir at %s becomes a fresh %s of dbduel's own (datadir=%s), not %q", v.Target, kind, kind, v.Source))
		default:
			notes = append(notes, fmt.Sprintf("volume %s at %s is not honoured", v.Source, v.Target))
		}
	}
	if len(svc.Ports) > 0 {
		notes = append(notes, "published ports are rewritten to a free 127.0.0.1 port")
	}
	return strings.Join(parts, ","), notes, nil
}

func sortedEnvKeys(m types.MappingWithEquals) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// quoteSpecValue double-quotes a key=value item whose value holds a comma.
func quoteSpecValue(item string) string {
	k, v, _ := strings.Cut(item, "=")
	if strings.Contains(v, ",") {
		return k + `="` + v + `"`
	}
	return item
}

// lookupIn is os.LookupEnv over an environment in os.Environ's form.
func lookupIn(environ []string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		for _, kv := range environ {
			if key, v, ok := strings.Cut(kv, "="); ok && key == k {
				return v, true
			}
		}
		return "", false
	}
}
