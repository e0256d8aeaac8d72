package container

import (
	"strings"
	"testing"
)

// Keys after a server URL: none is a plain server; client=beside needs its
// engine and an image for the agent; anything else is refused by name.
func TestParseBesideKeys(t *testing.T) {
	if _, beside, err := ParseBesideKeys(""); beside || err != nil {
		t.Fatalf("no keys: beside %v err %v", beside, err)
	}
	k, beside, err := ParseBesideKeys("client=beside,engine=tcp://10.0.0.2:2375,image=debian:bookworm-slim")
	if err != nil || !beside || k.Engine != "tcp://10.0.0.2:2375" || k.Image != "debian:bookworm-slim" {
		t.Fatalf("keys %+v beside %v err %v", k, beside, err)
	}
	for keys, want := range map[string]string{
		"client=netns,engine=tcp://h:1,image=i": `client="netns"`,
		"client=beside,image=i":                 "needs engine=tcp://",
		"client=beside,engine=h:1":              "needs engine=tcp://",
		"client=beside,engine=tcp://h:1":        "needs image=IMAGE",
		"cpus=1":                                `unknown key "cpus"`,
		"ss@host/db":                            "%2C",
	} {
		if _, _, err := ParseBesideKeys(keys); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", keys, err, want)
		}
	}
}
