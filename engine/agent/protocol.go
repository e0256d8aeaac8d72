// Package agent runs workloads somewhere else on the engine's behalf: the
// dbduel binary, copied into a container, serves requests on its stdin and
// answers on its stdout (Serve); the Client on the host side is an
// engine.Remote, so the agent's intervals feed the same engine, TUI,
// verdict plan and reports. The messages are JSON lines; histograms travel
// in HdrHistogram's compressed V2 encoding, so merged intervals stay exact.
package agent

import (
	"time"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/workload"
	"github.com/dbduel/dbduel/targets/cgroupstat"
)

// request is one operation for the agent.
type request struct {
	Op       string   `json:"op"` // hello, check, prepare, cleanup, run, stop, go, opcount, servertime, cgroup
	Workload string   `json:"workload,omitempty"`
	Args     []string `json:"args,omitempty"`
	Threads  int      `json:"threads,omitempty"`
	Run      *runSpec `json:"run,omitempty"`
	// Endpoint, if set, is a server the agent reaches from where it runs
	// (the server's own network namespace); without it the agent runs on
	// its machine (the system micro-benchmarks).
	Endpoint *driver.Endpoint `json:"endpoint,omitempty"`
}

// runSpec is the engine.Config of one run, without the host-side hooks.
type runSpec struct {
	Threads        int           `json:"threads"`
	Time           time.Duration `json:"time_ns"`
	Events         uint64        `json:"events"`
	ReportInterval time.Duration `json:"report_interval_ns"`
	Percentile     float64       `json:"percentile"`
	Seed           uint64        `json:"seed"`
	Rate           float64       `json:"rate"`
	Warmup         time.Duration `json:"warmup_ns"`
	// Barrier makes the run wait for a "go" twice: once every thread is
	// connected (after its "ready") and once every statement is done
	// (after its "ended"), so that the agents of one target start and end
	// together and the server's counters are read between (agents=N).
	Barrier bool `json:"barrier,omitempty"`
	// ThreadBase and ThreadsOf place the run's threads among the group's
	// (engine.Config's fields of the same names).
	ThreadBase int `json:"thread_base,omitempty"`
	ThreadsOf  int `json:"threads_of,omitempty"`
}

// reply is one message from the agent; a request ends with done or error.
type reply struct {
	Type     string               `json:"type"` // hello, progress, ready, waiting, interval, ended, run, done, error
	Version  string               `json:"version,omitempty"`
	Facts    map[string]string    `json:"facts,omitempty"`
	Progress *workload.Progress   `json:"progress,omitempty"`
	Interval *result.Interval     `json:"interval,omitempty"`
	Hist     string               `json:"hist,omitempty"` // base64, HdrHistogram V2 compressed
	State    *workload.TableState `json:"state,omitempty"`
	Removed  []string             `json:"removed,omitempty"`
	Run      *result.Run          `json:"run,omitempty"`
	OpCount  *driver.OpCount      `json:"op_count,omitempty"`
	Time     *driver.ServerTime   `json:"server_time,omitempty"`
	Cgroup   *cgroupstat.Usage    `json:"cgroup,omitempty"`
	Error    string               `json:"error,omitempty"`
}
