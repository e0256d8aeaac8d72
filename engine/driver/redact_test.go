package driver

import (
	"strings"
	"testing"
)

// Every secret a user may write is hidden, whatever it holds: a password
// with '@', ':' or ',' in it, any env= value (quoted, commas included),
// URLs inside messages; and nothing but secrets.
func TestRedactHidesEverySecret(t *testing.T) {
	for in, want := range map[string]string{
		"mysql://root:p@ss@127.0.0.1:3306/db":                                "mysql://root:***@127.0.0.1:3306/db",
		"mysql://root:pw@127.0.0.1:1/db,client=beside,engine=tcp://10.0.0.1": "mysql://root:***@127.0.0.1:1/db,client=beside,engine=tcp://10.0.0.1",
		"mysql://u:a,b:c@h/db":                                               "mysql://u:***@h/db",
		"postgres://postgres@h:5432/db":                                      "postgres://postgres@h:5432/db",
		"docker:img,env=MYSQL_PWD=topsecret,memory=1g":                       "docker:img,env=MYSQL_PWD=***,memory=1g",
		"docker:img,env=API_TOKEN=abc123":                                    "docker:img,env=API_TOKEN=***",
		`docker:img,env="MYSQL_ROOT_PASSWORD=abc,def",cpus=1`:                `docker:img,env="MYSQL_ROOT_PASSWORD=***",cpus=1`,
		"connect to mongodb://u:s3cret@h:1/db: refused":                      "connect to mongodb://u:***@h:1/db: refused",
		"iteration 2: c env=A=1→2":                                           "iteration 2: c env=A=***",
		"no secret here: env is fine, environment too":                       "no secret here: env is fine, environment too",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
		for _, secret := range []string{"p@ss", "topsecret", "abc123", "abc,def", "s3cret", "a,b:c"} {
			if strings.Contains(in, secret) && strings.Contains(Redact(in), secret) {
				t.Errorf("Redact(%q) shows %q", in, secret)
			}
		}
	}
}
