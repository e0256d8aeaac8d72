package container

import (
	"testing"

	_ "github.com/dbduel/dbduel/engine/driver/mongo"    // protocol= names registered protocols
	_ "github.com/dbduel/dbduel/engine/driver/mysql"    //
	_ "github.com/dbduel/dbduel/engine/driver/postgres" //
)

// docker: SPECs: parsed or refused, never a panic; what parses has an image.
func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{"img", "img:1,memory=2g,cpus=1.5", `img,env="A=1,2"`, "img,ulimit=nofile=1:2,shm=64m", ",", "img,memory=", "img,protocol=nope", `img,args="--x`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := ParseSpec(s)
		if err == nil && o.Image == "" {
			t.Fatalf("%q parsed without an image", s)
		}
	})
}
