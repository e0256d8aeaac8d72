package cli

import (
	"io"
	"os"
	"strings"
)

// State is what every verb shares, and all it reads of the process: where
// output goes, the environment, and the exit code. Tests make one with
// their own buffers and environment (as k6's cmd/state).
type State struct {
	Stdout, Stderr io.Writer
	Env            map[string]string
	Exit           int
}

// NewState is a State over the given streams and environment (os.Environ's
// KEY=VALUE form).
func NewState(stdout, stderr io.Writer, environ []string) *State {
	env := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return &State{Stdout: stdout, Stderr: stderr, Env: env}
}

// Getenv is the environment variable k ("" when unset).
func (st *State) Getenv(k string) string { return st.Env[k] }

// LookupEnv is the environment variable k and whether it is set.
func (st *State) LookupEnv(k string) (string, bool) {
	v, ok := st.Env[k]
	return v, ok
}

// Environ is the environment in os.Environ's form.
func (st *State) Environ() []string {
	var kvs []string
	for k, v := range st.Env {
		kvs = append(kvs, k+"="+v)
	}
	return kvs
}

// executable is the running dbduel (copied into agent containers).
var executable = os.Executable
