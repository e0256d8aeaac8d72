package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The house's rules (docs/architecture.md), kept by a test so that every
// later change keeps them. They run under -short too: they need only the
// source tree and the go command.

// The top level holds main.go and the end-to-end tests, nothing else in Go.
func TestTopLevelHoldsOnlyMainGo(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f != "main.go" && !strings.HasSuffix(f, "_test.go") {
			t.Errorf("%s: the top level's only non-test Go file is main.go (the CLI lives in ui/cli)", f)
		}
	}
}

// No non-test function is over 100 lines: a newcomer reads one screen at a time.
func TestNoFunctionOver100Lines(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || d.Name() == "vendor") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			if n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1; n > 100 {
				t.Errorf("%s: %s is %d lines (at most 100: split it into named steps)", path, fn.Name.Name, n)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The README is the front door: under 200 lines, the reference under docs/.
func TestReadmeIsShort(t *testing.T) {
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n >= 200 {
		t.Errorf("README.md has %d lines: keep it under 200 and move reference to docs/", n)
	}
}

// deps is `go list -deps` of the packages.
func deps(t *testing.T, pkgs ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list", "-deps"}, pkgs...)...).Output()
	if err != nil {
		t.Fatalf("go list -deps %v: %v", pkgs, err)
	}
	return strings.Fields(string(out))
}

// Targets know where a database runs, not the load loop; the engine
// knows no database driver (protocols register themselves from ui/cli).
func TestLayeringOfTargetsAndEngine(t *testing.T) {
	const mod = "github.com/dbduel/dbduel/"
	forbidden := map[string]bool{mod + "engine": true, mod + "engine/plan": true, mod + "engine/stats": true, mod + "engine/workload": true}
	for _, d := range deps(t, "./targets/...") {
		if forbidden[d] {
			t.Errorf("targets/... depend on %s", d)
		}
	}
	for _, d := range deps(t, "./engine", "./engine/driver") {
		for _, drv := range []string{"github.com/go-sql-driver/mysql", "github.com/jackc/pgx/v5", "go.mongodb.org/mongo-driver/v2/mongo", mod + "engine/driver/mysql", mod + "engine/driver/postgres", mod + "engine/driver/mongo"} {
			if d == drv {
				t.Errorf("engine depends on the database driver %s", d)
			}
		}
	}
}
