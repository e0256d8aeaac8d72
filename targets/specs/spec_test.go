package specs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckCpusetNamesTheCPUsThatExist(t *testing.T) {
	defer func(f func() string) { onlineCPUs = f }(onlineCPUs)
	onlineCPUs = func() string { return "0-1" }
	if err := CheckCpuset("0-1"); err != nil {
		t.Fatal(err)
	}
	err := CheckCpuset("7")
	if err == nil || err.Error() != "cpuset=7: CPU 7 does not exist; this machine's CPUs are 0-1" {
		t.Fatalf("cpuset=7: %v", err)
	}
	if err := CheckCpuset("1-0"); err == nil || !strings.Contains(err.Error(), "want CPU numbers") {
		t.Fatalf("1-0: %v", err)
	}
}

func TestCheckCnfRefusesDirectoriesAndMissingFiles(t *testing.T) {
	dir := t.TempDir()
	if _, err := CheckCnf(dir); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Fatalf("directory: %v", err)
	}
	if _, err := CheckCnf(filepath.Join(dir, "none.cnf")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("missing: %v", err)
	}
	f := filepath.Join(dir, "my.cnf")
	os.WriteFile(f, []byte("[mysqld]\n"), 0o644)
	if abs, err := CheckCnf(f); err != nil || abs != f {
		t.Fatalf("file: %q %v", abs, err)
	}
}
