package driver

import (
	"strings"
	"testing"
)

// A protocol is found by its name and each of its URL schemes; an unknown
// one is an error naming the known ones, never a default.
func TestRegistryLooksUpByNameAndScheme(t *testing.T) {
	p := &Protocol{Name: "fakedb", Schemes: []string{"fakedb", "fake"}, Image: ImageConventions{Port: 65001, Setup: func(ImageSetup) ImageStart { return ImageStart{} }}}
	Register(p)
	for _, k := range []string{"fakedb", "fake"} {
		if got, err := Lookup(k); err != nil || got != p {
			t.Fatalf("Lookup(%q) = %v, %v", k, got, err)
		}
	}
	if got, err := ForURL("fake://u:p@h:1/db"); err != nil || got != p {
		t.Fatalf("ForURL: %v, %v", got, err)
	}
	if got, ok := ForPort(65001); !ok || got != p {
		t.Fatalf("ForPort: %v %v", got, ok)
	}
	_, err := Lookup("mysqlx")
	if err == nil || !strings.Contains(err.Error(), `unknown protocol "mysqlx"`) || !strings.Contains(err.Error(), "fakedb") {
		t.Fatalf("unknown protocol: %v", err)
	}
	if _, err := Lookup(""); err == nil {
		t.Fatal("an empty protocol must not fall back to any driver")
	}
	if _, err := ForURL("no-scheme"); err == nil {
		t.Fatal("a string without a scheme is not a URL")
	}
}

// Registering a name twice is a programming error caught at start-up.
func TestRegisterTwicePanics(t *testing.T) {
	Register(&Protocol{Name: "twice"})
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	Register(&Protocol{Name: "twice"})
}

// A protocol's config file: header, shared settings, then the include of
// the user's file, one a line.
func TestRenderLines(t *testing.T) {
	got := string(RenderLines([]string{"# h", "[s]"}, []string{"a = 1", "b = 2"}, "!include /u.cnf"))
	if got != "# h\n[s]\na = 1\nb = 2\n!include /u.cnf\n" {
		t.Fatalf("%q", got)
	}
	if got := string(RenderLines([]string{"# h"}, []string{"a = 1"}, "")); got != "# h\na = 1\n" {
		t.Fatalf("%q", got)
	}
}
