package mongo

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dbduel/dbduel/engine/driver"
)

func init() {
	driver.Register(&driver.Protocol{
		Name:           Protocol,
		Title:          "MongoDB",
		Schemes:        []string{"mongodb", "mongodb+srv"},
		DefaultPort:    27017,
		URLHint:        "mongodb://user:pass@host:port/db",
		ParseURL:       parseAnyURL,
		Ping:           Ping,
		ServerInfo:     ServerInfo,
		Variables:      Variables,
		EnsureDatabase: EnsureDatabase,
		MakeAdmin:      MakeAdmin,
		Open: func(ep driver.Endpoint, _ driver.OpenOptions) driver.Opener {
			return Opener(ep)
		},
		Image: driver.ImageConventions{Port: 27017, Datadir: "/data/db", Setup: imageSetup},
		// mongod has no include directive: a cnf= file is its --config.
		Config: driver.ConfigFile{UserName: "mongod.conf"},
	})
}

// imageSetup is the official mongo image's set-up:
// MONGO_INITDB_ROOT_USERNAME and _PASSWORD make a root user in admin,
// arguments starting with '-' go to mongod, data in /data/db.
func imageSetup(in driver.ImageSetup) driver.ImageStart {
	st := driver.ImageStart{
		Endpoint: driver.Endpoint{Protocol: Protocol, User: "root", Password: in.Password, DB: "sbtest", Params: "authSource=admin"},
		Env:      []string{"MONGO_INITDB_ROOT_USERNAME=root", "MONGO_INITDB_ROOT_PASSWORD=" + in.Password},
	}
	if in.UserConfig != "" {
		st.Cmd = append(st.Cmd, "--config", in.UserConfig)
	}
	if in.HostNetwork {
		st.Cmd = append(st.Cmd, "--port", strconv.Itoa(in.Port), "--bind_ip", "127.0.0.1")
	}
	if in.OverlayDatadir != "" {
		st.Cmd = append(st.Cmd, "--dbpath", in.OverlayDatadir)
	}
	return st
}

// parseAnyURL is ParseURL, with DNS seed lists refused by name.
func parseAnyURL(spec string) (driver.Endpoint, error) {
	if strings.HasPrefix(spec, "mongodb+srv://") {
		return driver.Endpoint{}, fmt.Errorf("SPEC %q: mongodb+srv:// (DNS seed lists) is not supported: give the server as mongodb://host:port", driver.RedactURL(spec))
	}
	return ParseURL(spec)
}
