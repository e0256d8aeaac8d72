package container

import (
	"strings"
	"testing"
)

func TestRunnableRefusesInOneLine(t *testing.T) {
	vol := Options{Image: "mariadb:11.4", Datadir: "volume"}
	overlay := Options{Image: "mariadb:11.4", Datadir: "overlay"}
	for _, c := range []struct {
		o              Options
		os, arch, user string
		want           string // "" runs
	}{
		{vol, "linux", "amd64", "", ""},
		{vol, "linux", "amd64", "999", ""},                     // a volume is the image's own directory, owned by its user
		{overlay, "linux", "amd64", "root", ""},                // root makes any directory
		{overlay, "linux", "amd64", "0:0", ""},                 // so does uid 0
		{overlay, "linux", "amd64", "999:999", "user 999:999"}, // not root: no directory in /var/lib
		{overlay, "linux", "amd64", "mysql", "datadir=volume"},
		{vol, "linux", "arm64", "", "linux/arm64"},
		{vol, "windows", "amd64", "", "is for windows"},
	} {
		err := runnable(c.o, c.os, c.arch, c.user, "linux", "amd64")
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: refused: %v", c, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%+v: want one line with %q, got %v", c, c.want, err)
		}
	}
}
