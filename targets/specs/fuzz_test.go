package specs

import (
	"strings"
	"testing"

	_ "github.com/dbduel/dbduel/engine/driver/mongo"    // every scheme of the registry
	_ "github.com/dbduel/dbduel/engine/driver/mysql"    //
	_ "github.com/dbduel/dbduel/engine/driver/postgres" //
)

// Server URLs of every scheme and --target flags: parsed or refused with a
// usage error, never a panic, and a refusal never shows the password.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"mysql://root:pw@127.0.0.1:3306/sbtest", "postgres://u:p@h/db", "postgresql://h:5432", "mongodb://u:p@h:27017/db?authSource=admin",
		"mongodb+srv://u:p@h/db", "mysql://u:p%zz@h/db", "mysql://[::1]:99999/x", "nope://x", "mysql://"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if _, err := ParseURL(s); err != nil && strings.Contains(s, ":secretpw@") && strings.Contains(err.Error(), "secretpw") {
			t.Fatalf("%q: the error shows the password: %v", s, err)
		}
		SplitTargetFlag(s)
		SplitSpec(s)
	})
}
