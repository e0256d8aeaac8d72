package container

import (
	"strings"
	"testing"
)

// The SPEC editor may change a running container's limits in place (not
// remove one), other keys by a new container, never the image, engine,
// published address or client; what start-up settled (the protocol read
// from the image) does not count as a change.
func TestRespecChangesOnlyTheLimits(t *testing.T) {
	o, err := ParseSpec("dbduel-test/mariadb:10.11.19,memory=2g,cpus=1")
	if err != nil {
		t.Fatal(err)
	}
	o.Protocol = "mysql" // read from the image at start
	s := &Server{spec: "docker:dbduel-test/mariadb:10.11.19,memory=2g,cpus=1", o: o}
	for spec, want := range map[string]string{
		"docker:dbduel-test/mariadb:10.11.19,memory=4g,cpus=1":              "",
		"docker:dbduel-test/mariadb:10.11.19,memory=4g,cpus=1.5,cpuset=0":   "",
		"docker:dbduel-test/mariadb:10.11.19,memory=2g,cpus=1,network=host": "",
		"docker:dbduel-test/mariadb:10.11.19,cpus=1,datadir=bind":           "",
		"docker:dbduel-test/mariadb:10.11.18,memory=2g,cpus=1":              "the image",
		"docker:dbduel-test/mariadb:10.11.19,memory=2g,cpus=1,client=netns": "client=",
		"docker:dbduel-test/mariadb:10.11.19,cpus=1":                        "not removed",
		"podman:dbduel-test/mariadb:10.11.19,memory=4g,cpus=1":              "must stay docker:",
		"docker:dbduel-test/mariadb:10.11.19,memory=lots":                   "memory",
	} {
		err := s.CheckRespec(spec)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", spec, err, want)
		}
	}
	got, err := s.respecOptions("docker:dbduel-test/mariadb:10.11.19,memory=4g,cpus=1.5,cpuset=0")
	if err != nil || got.MemoryBytes != 4<<30 || got.CPUs != 1.5 || got.Cpuset != "0" || !s.limitsOnly(got) {
		t.Errorf("options %+v, %v (in place: %v)", got, err, s.limitsOnly(got))
	}
	if got, _ := s.respecOptions("docker:dbduel-test/mariadb:10.11.19,memory=2g,cpus=1,network=host"); s.limitsOnly(got) {
		t.Errorf("network=host taken as a change in place")
	}
}
