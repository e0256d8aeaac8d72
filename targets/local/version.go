package local

import (
	"fmt"
	"os/exec"
	"strings"
)

// MariaDBVersion is the version of this machine's mariadbd ("10.11.19"):
// the tag of the test image that matches it.
func MariaDBVersion() (string, error) {
	bin, err := exec.LookPath("mariadbd")
	if err != nil {
		bin = "/usr/sbin/mariadbd"
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("no local MariaDB server: install it with `apt-get install mariadb-server` (or run scripts/demo.sh)")
	}
	// "mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu ..."
	f := strings.Fields(string(out))
	for i, w := range f {
		if w == "Ver" && i+1 < len(f) {
			v, _, _ := strings.Cut(f[i+1], "-")
			return v, nil
		}
	}
	return "", fmt.Errorf("cannot read the MariaDB version from %q", strings.TrimSpace(string(out)))
}
