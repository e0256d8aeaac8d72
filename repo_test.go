package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The house's rules (docs/architecture.md), kept by a test so that every
// later change keeps them. They run under -short too: they need only the
// source tree and the go command. Each rule reads a module's tree and
// returns what breaks it; TestHouseRulesCatchViolations plants a violation
// of each in a module of its own and sees the rule name it.

// houseRule is one rule: check returns what breaks it in the module at dir.
type houseRule struct {
	name  string
	check func(t *testing.T, dir string) []string
}

var houseRules = []houseRule{
	{"top level holds only main.go", topLevelOnlyMainGo},
	{"no function over 100 lines", noFunctionOver100Lines},
	{"README under 200 lines", readmeIsShort},
	{"targets: no load loop, UI or protocol", targetsLayering},
	{"engine: no database driver", engineLayering},
	{"targets/container: files under 500 lines", containerFilesShort},
	{"ui/tui: no file or network I/O", tuiDoesNoIO},
}

func TestHouseRules(t *testing.T) {
	for _, r := range houseRules {
		t.Run(r.name, func(t *testing.T) {
			for _, v := range r.check(t, ".") {
				t.Error(v)
			}
		})
	}
}

// planted is a module breaking one rule: its files by path.
type planted struct {
	rule  string
	files map[string]string
	want  string // what the rule's report names
}

func TestHouseRulesCatchViolations(t *testing.T) {
	long := "package x\n\n// f is a 150-line function in a package-level var.\nvar f = func() {\n" + strings.Repeat("\tprintln()\n", 150) + "}\n"
	cases := []planted{
		{"top level holds only main.go", map[string]string{"helper.go": "package main\n"}, "helper.go"},
		{"no function over 100 lines", map[string]string{"x/x.go": long}, "f is"},
		{"no function over 100 lines", map[string]string{"x/x.go": "package x\n\nfunc g() {\n" + strings.Repeat("\tprintln()\n", 120) + "}\n"}, "g is"},
		{"README under 200 lines", map[string]string{"README.md": strings.Repeat("line\n", 250)}, "250 lines"},
		{"targets: no load loop, UI or protocol", map[string]string{
			"targets/t.go":             "package targets\n\nimport _ \"example.com/planted/engine/driver/mysql\"\n",
			"engine/driver/mysql/m.go": "package mysql\n"}, "engine/driver/mysql"},
		{"targets: no load loop, UI or protocol", map[string]string{
			"targets/c/c.go": "package c\n\nimport _ \"example.com/planted/ui/chart\"\n",
			"ui/chart/c.go":  "package chart\n"}, "ui/chart"},
		{"targets: no load loop, UI or protocol", map[string]string{
			"targets/c/c.go":   "package c\n\nimport _ \"example.com/planted/engine/plan\"\n",
			"engine/plan/p.go": "package plan\n"}, "engine/plan"},
		{"engine: no database driver", map[string]string{
			"engine/e.go":                 "package engine\n\nimport _ \"example.com/planted/engine/driver/postgres\"\n",
			"engine/driver/d.go":          "package driver\n",
			"engine/driver/postgres/p.go": "package postgres\n"}, "engine/driver/postgres"},
		{"targets/container: files under 500 lines", map[string]string{
			"targets/container/big.go": "package container\n" + strings.Repeat("\n", 600)}, "big.go"},
		{"ui/tui: no file or network I/O", map[string]string{"ui/tui/m.go": "package tui\n\nimport \"os\"\n\nvar _ = os.Open\n"}, `"os"`},
		{"ui/tui: no file or network I/O", map[string]string{"ui/tui/m.go": "package tui\n\nimport \"net\"\n\nvar _ = net.Dial\n"}, `"net"`},
	}
	for _, c := range cases {
		t.Run(c.rule+" "+c.want, func(t *testing.T) {
			dir := plantModule(t, c.files)
			var rule *houseRule
			for i := range houseRules {
				if houseRules[i].name == c.rule {
					rule = &houseRules[i]
				}
			}
			if rule == nil {
				t.Fatalf("no rule %q", c.rule)
			}
			got := rule.check(t, dir)
			if !strings.Contains(strings.Join(got, "\n"), c.want) {
				t.Fatalf("the rule missed the planted violation (want a report naming %s), reported: %q", c.want, got)
			}
		})
	}
}

// plantModule writes a module example.com/planted with files (and a
// README and main.go that break nothing) in a temporary directory.
func plantModule(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	base := map[string]string{"go.mod": "module example.com/planted\n\ngo 1.26\n", "main.go": "package main\n\nfunc main() {}\n", "README.md": "# planted\n"}
	for p, s := range files {
		base[p] = s
	}
	for p, s := range base {
		path := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// The top level holds main.go and the end-to-end tests, nothing else in Go.
func topLevelOnlyMainGo(t *testing.T, dir string) []string {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		if f := filepath.Base(f); f != "main.go" && !strings.HasSuffix(f, "_test.go") {
			out = append(out, f+": the top level's only non-test Go file is main.go (the CLI lives in ui/cli)")
		}
	}
	return out
}

// No non-test function is over 100 lines, a function literal outside any
// function (a package-level var) included: a newcomer reads one screen at
// a time.
func noFunctionOver100Lines(t *testing.T, dir string) []string {
	var out []string
	fset := token.NewFileSet()
	walkGo(t, dir, func(path string) {
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		lines := func(n ast.Node) int { return fset.Position(n.End()).Line - fset.Position(n.Pos()).Line + 1 }
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok {
				if fn.Body != nil && lines(fn) > 100 {
					out = append(out, fmt.Sprintf("%s: %s is %d lines (at most 100: split it into named steps)", path, fn.Name.Name, lines(fn)))
				}
				continue
			}
			ast.Inspect(decl, func(n ast.Node) bool {
				lit, ok := n.(*ast.FuncLit)
				if ok && lines(lit) > 100 {
					out = append(out, fmt.Sprintf("%s:%d: %s is a function of %d lines (at most 100)", path, fset.Position(lit.Pos()).Line, declNames(decl), lines(lit)))
				}
				return !ok
			})
		}
	})
	return out
}

// declNames names a top-level declaration's identifiers ("f is").
func declNames(d ast.Decl) string {
	var names []string
	if g, ok := d.(*ast.GenDecl); ok {
		for _, s := range g.Specs {
			if v, ok := s.(*ast.ValueSpec); ok {
				for _, n := range v.Names {
					names = append(names, n.Name)
				}
			}
		}
	}
	return strings.Join(names, ", ") + " is"
}

// walkGo calls fn with every non-test Go file under dir.
func walkGo(t *testing.T, dir string, fn func(path string)) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == dir && os.IsNotExist(err) {
				return filepath.SkipDir // nothing of this kind here
			}
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || d.Name() == "vendor") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			fn(path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The README is the front door: under 200 lines, the reference under docs/.
func readmeIsShort(t *testing.T, dir string) []string {
	data, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n >= 200 {
		return []string{fmt.Sprintf("README.md has %d lines: keep it under 200 and move reference to docs/", n)}
	}
	return nil
}

// module is the module path of the module at dir.
func module(t *testing.T, dir string) string {
	t.Helper()
	cmd := exec.Command("go", "list", "-m")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -m in %s: %v", dir, err)
	}
	return strings.TrimSpace(string(out)) + "/"
}

// deps is `go list -deps` of the packages, in the module at dir.
func deps(t *testing.T, dir string, pkgs ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-deps"}, pkgs...)...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %v in %s: %v", pkgs, dir, err)
	}
	return strings.Fields(string(out))
}

// protocolPackages are the database protocols and their clients: the
// registry (engine/driver) and the machine's own driver
// (engine/driver/system) are not among them.
func protocolPackages(mod string) []string {
	return []string{"github.com/go-sql-driver/mysql", "github.com/jackc/pgx/v5", "go.mongodb.org/mongo-driver/v2/mongo",
		mod + "engine/driver/mysql", mod + "engine/driver/postgres", mod + "engine/driver/mongo"}
}

// Targets know where a database runs: not the load loop, not a screen,
// not a protocol (they reach servers through the registry).
func targetsLayering(t *testing.T, dir string) []string {
	mod := module(t, dir)
	forbidden := map[string]bool{mod + "engine": true, mod + "engine/plan": true, mod + "engine/stats": true, mod + "engine/workload": true}
	for _, p := range protocolPackages(mod) {
		forbidden[p] = true
	}
	var out []string
	for _, d := range deps(t, dir, "./targets/...") {
		if forbidden[d] || strings.HasPrefix(d, mod+"ui/") || strings.HasPrefix(d, mod+"engine/workload/") {
			out = append(out, "targets/... depend on "+d)
		}
	}
	return out
}

// The engine knows no database driver (protocols register themselves
// from ui/cli), no screen and no container.
func engineLayering(t *testing.T, dir string) []string {
	mod := module(t, dir)
	forbidden := map[string]bool{"github.com/docker/docker/client": true, "github.com/charmbracelet/bubbletea": true}
	for _, p := range protocolPackages(mod) {
		forbidden[p] = true
	}
	var out []string
	for _, d := range deps(t, dir, "./engine", "./engine/driver") {
		if forbidden[d] || strings.HasPrefix(d, mod+"ui/") || strings.HasPrefix(d, mod+"targets") {
			out = append(out, "engine depends on "+d)
		}
	}
	return out
}

// No non-test file in targets/container over 500 lines: its files are
// split by job (start, describe, clean, respec, ...).
func containerFilesShort(t *testing.T, dir string) []string {
	var out []string
	walkGo(t, filepath.Join(dir, "targets", "container"), func(path string) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(data), "\n"); n > 500 {
			out = append(out, fmt.Sprintf("%s is %d lines (at most 500: split it by job)", path, n))
		}
	})
	return out
}

// The TUI does no file or network I/O of its own: what it writes or asks
// goes through functions given to it, called in commands (tea.Cmd), never
// in Update (ui/tui's live_test checks the control is not called there).
func tuiDoesNoIO(t *testing.T, dir string) []string {
	banned := []string{"os", "os/exec", "net", "net/http", "io/ioutil", "path/filepath", "syscall"}
	var out []string
	fset := token.NewFileSet()
	walkGo(t, filepath.Join(dir, "ui", "tui"), func(path string) {
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			for _, b := range banned {
				if p == b {
					out = append(out, fmt.Sprintf("%s imports %q: the TUI's I/O goes through functions it is given, in commands", path, p))
				}
			}
		}
	})
	return out
}
