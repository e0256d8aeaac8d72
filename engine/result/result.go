// Package result is dbduel's result document (docs/schema.md), its
// JSON file (written atomically) and the NDJSON stream of --format json.
package result

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// SchemaVersion is bumped when a field changes meaning.
const SchemaVersion = 1

// Result is everything one dbduel invocation measured.
type Result struct {
	SchemaVersion int                    `json:"schema_version"`
	Complete      bool                   `json:"complete"`
	StartedAt     time.Time              `json:"started_at"`
	FinishedAt    time.Time              `json:"finished_at,omitzero"`
	DbduelVersion string                 `json:"dbduel_version"`
	Workload      Workload               `json:"workload"`
	Plan          Plan                   `json:"plan"`
	Targets       []Target               `json:"targets"`
	Runs          []Run                  `json:"runs"`
	Stats         map[string]TargetStats `json:"stats"`
	PointStats    []PointStats           `json:"point_stats,omitempty"` // sweeps: stats per point
	Comparisons   []Comparison           `json:"comparisons"`
	Parity        *Parity                `json:"parity,omitempty"`
	// NoiseFloor is the baseline against itself (--calibrate).
	NoiseFloor *NoiseFloor `json:"noise_floor,omitempty"`
	// NoiseFloors is the A/A check per sweep point and metric.
	NoiseFloors []NoiseFloor `json:"noise_floors,omitempty"`
	// Environment fingerprints the machine (every key always present;
	// "unknown: <reason>" when unreadable).
	Environment map[string]string `json:"environment"`
	Warnings    []string          `json:"warnings,omitempty"`
	Error       string            `json:"error,omitempty"`
	// Explain is dbduel explain's ablation ladder (absent for other runs).
	Explain *Explain `json:"explain,omitempty"`
	// Live is dbduel live's session: its slices and what a switch cost;
	// Segments its stretches of unchanged load (absent for other runs).
	Live     *Live     `json:"live,omitempty"`
	Segments []Segment `json:"segments,omitempty"`
}

// Live is how dbduel live ran: every round, each target one slice (in a
// shuffled order) whose first SettleS seconds are run but not counted.
type Live struct {
	SliceS  float64 `json:"slice_s"`
	SettleS float64 `json:"settle_s"`
	// SwitchMs is the idle time between one slice's last statement and
	// the next slice's first (mean and worst over the switches measured).
	SwitchMs     float64 `json:"switch_ms"`
	SwitchMaxMs  float64 `json:"switch_max_ms"`
	Switches     int     `json:"switches"`
	Interrupted  bool    `json:"interrupted,omitempty"` // the round under way at the quit was left out
	ReplayedFrom string  `json:"replayed_from,omitempty"`
}

// Segment is a stretch of dbduel live with the load unchanged: its rounds
// are blocks of one plan point (Point), paired only with each other.
type Segment struct {
	Point       int     `json:"point"`
	WhatChanged string  `json:"what_changed"`
	Threads     int     `json:"threads"`
	Rate        float64 `json:"rate"`
	Workload    string  `json:"workload"`
	FirstBlock  int     `json:"first_block"`
	Rounds      int     `json:"rounds"` // complete rounds
	// SettlingRounds are the rounds run after a restart and not counted,
	// while the restarted targets warmed up (0 when nothing restarted);
	// SettleNote says when settling was capped before they were steady.
	SettlingRounds int    `json:"settling_rounds"`
	SettleNote     string `json:"settle_note,omitempty"`
	// Iteration counts the configurations tried (1: as started; a watched
	// cnf edited and its targets restarted: 2, ...); ReadBack is what each
	// restarted target's server reports for the settings that changed.
	Iteration int                          `json:"iteration"`
	ReadBack  map[string]map[string]string `json:"read_back,omitempty"`
	// VsIteration1 is each restarted target's change since iteration 1,
	// each side against the baseline of its own rounds (stats.iterationDeltas).
	VsIteration1 []Comparison `json:"vs_iteration_1,omitempty"`
	// Comparisons are the segment's (its point's) comparisons, as in the
	// result's comparisons[].
	Comparisons []Comparison `json:"comparisons"`
}

// Workload names the script and its effective options.
type Workload struct {
	Name    string         `json:"name"`
	Options map[string]any `json:"options"`
}

// Plan is the order things ran in: blocks of target names.
type Plan struct {
	Runs       int        `json:"runs"`
	WarmupRuns int        `json:"warmup_runs,omitempty"`
	Seed       int64      `json:"seed"`
	Blocks     [][]string `json:"blocks"`
	Points     []Point    `json:"points"`
	Threads    int        `json:"threads"`
	TimeS      float64    `json:"time_s"`
	Events     uint64     `json:"events"`
	Rate       float64    `json:"rate,omitempty"`
	WarmupS    float64    `json:"warmup_s,omitempty"`
	Percentile float64    `json:"percentile"`
	// --runs auto: why blocks stopped (ci-target, max-runs, max-time) and
	// the TPS CI half-widths reached, per target.
	StoppedBy      string             `json:"stopped_by,omitempty"`
	CIHalfWidthPct map[string]float64 `json:"ci_half_width_pct,omitempty"`
	// MarginPct is --margin (equivalence verdicts); PrecisionPct the
	// half-width the primary metric's verdicts are held to (--ci-target,
	// a --fail-if or --margin threshold, or 5).
	MarginPct float64 `json:"margin_pct,omitempty"`
	// Alpha is --alpha: the family-wise level of the verdict words and
	// --fail-if (Holm); 0 in older files reads as 0.05.
	Alpha float64 `json:"alpha,omitempty"`
	// Stein is --runs auto's two-stage plan per point: the pilot's blocks
	// and TPS log-ratio sd per target, and the blocks they planned.
	Stein        []SteinPoint `json:"stein,omitempty"`
	PrecisionPct float64      `json:"precision_pct,omitempty"`
	Interval     float64      `json:"report_interval_s"`
}

// SteinPoint is one sweep point's two-stage plan (--runs auto).
type SteinPoint struct {
	Point         int                `json:"point"`
	PilotBlocks   int                `json:"pilot_blocks"`
	PlannedBlocks int                `json:"planned_blocks"`
	PilotSD       map[string]float64 `json:"pilot_sd"`
}

// Point is one point of a sweep (threads, table size).
type Point struct {
	Threads   int `json:"threads"`
	TableSize int `json:"table_size"`
}

// Target is a database as read back from it.
type Target struct {
	Name          string    `json:"name"`
	Kind          string    `json:"kind"` // native|local|container
	SpecRedacted  string    `json:"spec_redacted"`
	ServerVersion string    `json:"server_version"`
	Described     Described `json:"described"`
}

// Described is what the target really is, read back (inspect, cgroups, the server).
type Described struct {
	Image   string `json:"image,omitempty"`
	ImageID string `json:"image_id,omitempty"`
	// ImageDigest names the image's bits: its repo digest (sha256:…) when
	// it came from a registry, its ID when built locally: two runs of
	// "mysql:8.4" months apart say whether they ran the same image.
	ImageDigest string `json:"image_digest,omitempty"`
	// ImageUser is the user the container's processes start as, as the
	// engine reads it ("" is root): an official image's derivative may set
	// USER 999, and its server then never runs as root.
	ImageUser        string   `json:"image_user,omitempty"`
	Binary           string   `json:"binary,omitempty"`
	NetworkMode      string   `json:"network_mode,omitempty"` // host|bridge|none|slirp4netns
	NetworkPath      string   `json:"network_path,omitempty"` // direct|docker-proxy|rootlessport|bridge-direct|remote-published
	Datadir          *Datadir `json:"datadir,omitempty"`
	MemoryLimitBytes int64    `json:"memory_limit_bytes,omitempty"`
	CPUs             float64  `json:"cpus,omitempty"`
	Cpuset           string   `json:"cpuset,omitempty"`
	Seccomp          string   `json:"seccomp,omitempty"`
	// SeccompMode is the server process's filter as /proc/PID/status says:
	// disabled, strict or filter.
	SeccompMode string `json:"seccomp_mode,omitempty"`
	// CPUScope is what the server's CPU telemetry counts: "cgroup" (a
	// container's, or a managed local server's own cgroup), "process
	// group" (its processes summed, where no cgroup could be made) or "pid
	// namespace" (a rootless container's processes summed, on cgroup v1).
	CPUScope string `json:"cpu_scope,omitempty"`
	Address  string `json:"address,omitempty"`
	// Engine is what runs a container: "docker", "podman" or "kubernetes"
	// ("" for a process).
	Engine string `json:"engine,omitempty"`
	// Rootless says the container runs in a rootless Podman's user namespace.
	Rootless bool `json:"rootless,omitempty"`
	// Host is the machine the server runs on: "local" for this one, or
	// the address of a remote server or engine.
	Host string `json:"host,omitempty"`
	// ClientPlacement is where the benchmark client ran: "here" (dbduel's
	// own process), "netns" (an agent in the server container's network
	// namespace), "beside" (an agent on the server's host or node) or
	// "inside" (the system workloads' agent, in the container it measures).
	ClientPlacement string `json:"client_placement,omitempty"`
	// ClientAgents is how many agents shared the client's threads
	// (a k8s: target's agents=N; absent: one).
	ClientAgents int `json:"client_agents,omitempty"`
	// ClientNodes are the nodes a k8s: target's beside client ran on, each
	// once: its server's node, another (client-node=), or those of its
	// agents=N (spread=nodes), the server's first.
	ClientNodes []string `json:"client_nodes,omitempty"`
	// Kubernetes: where a k8s: target's server pod ran, as the API read
	// it back (its kubeconfig context, namespace, pod and node), its QoS
	// class (Guaranteed when requests equal limits), runtime class and the
	// StorageClass of its datadir's claim.
	KubeContext  string `json:"kube_context,omitempty"`
	Namespace    string `json:"namespace,omitempty"`
	Pod          string `json:"pod,omitempty"`
	Node         string `json:"node,omitempty"`
	QOSClass     string `json:"qos_class,omitempty"`
	RuntimeClass string `json:"runtime_class,omitempty"`
	StorageClass string `json:"storage_class,omitempty"`
	// CgroupPath is the pod's cgroup below the node's hierarchy, where its
	// CPU, memory and throttling were read.
	CgroupPath string `json:"cgroup_path,omitempty"`
	// System is what explains a system micro-benchmark's figure, as the
	// benchmark's process saw it: cpus_allowed, cpu_quota, memory_max,
	// cpu_governor, cpu_mhz, fs_type, mount_options, o_direct.
	System map[string]string `json:"system,omitempty"`
}

// Datadir is where the server keeps its data.
type Datadir struct {
	Kind   string `json:"kind"` // dir|volume|bind|overlay
	FSType string `json:"fstype,omitempty"`
	Path   string `json:"path,omitempty"`
}

// Run is one timed run of one target.
type Run struct {
	Target   string    `json:"target"`
	Block    int       `json:"block"`
	Index    int       `json:"index"`
	Point    int       `json:"point"`
	Warmup   bool      `json:"warmup"`
	Complete bool      `json:"complete"`
	Summary  Summary   `json:"summary"`
	Fairness *Fairness `json:"fairness,omitempty"`
	Honesty  *Honesty  `json:"honesty,omitempty"`
	// Histogram is the run's measured latencies (µs), an HDR histogram in
	// its V2 compressed, base64 encoding: merged across runs for latency
	// percentiles over a target's whole plan.
	Histogram string `json:"histogram,omitempty"`
	// WarmupQueries ran during --warmup-time: the server counted them too.
	WarmupQueries uint64     `json:"warmup_queries,omitempty"`
	WarmupEvents  uint64     `json:"warmup_events,omitempty"`
	Intervals     []Interval `json:"intervals"`
	// ServerTime is present when the server times its statements.
	ServerTime *ServerTime `json:"server_time,omitempty"`
}

// Summary totals a run; tps and qps are totals over the run's time.
type Summary struct {
	DurationS float64 `json:"duration_s"`
	Figures
	Queries    uint64  `json:"queries"`
	MinUS      float64 `json:"min_us"`
	AvgUS      float64 `json:"avg_us"`
	SumUS      float64 `json:"sum_us"`
	Percentile float64 `json:"percentile"`
	// Open-loop runs (--rate): latency above includes queue wait; service excludes it.
	ServiceAvgUS float64 `json:"service_avg_us,omitempty"`
	ServiceP95US float64 `json:"service_p95_us,omitempty"`
	// WakeLateAvgUS is how late, on average, a thread woke for an arrival
	// it waited for: included in latency, caused by the client, not a queue.
	WakeLateAvgUS float64 `json:"wake_late_avg_us,omitempty"`
	// UnservedEvents arrived before the run stopped and never started (open
	// loop); UnservedMaxWaitUS is how long the oldest of them had waited.
	UnservedEvents    uint64  `json:"unserved_events,omitempty"`
	UnservedMaxWaitUS float64 `json:"unserved_max_wait_us,omitempty"`
	WarmupS           float64 `json:"warmup_s,omitempty"`
	// Workloads that move data (memory, fileio): reads and writes x block / duration.
	ReadMiBPerS    float64 `json:"read_mib_per_s,omitempty"`
	WrittenMiBPerS float64 `json:"written_mib_per_s,omitempty"`
	// TPC-C, as HammerDB computes them from the server: NOPM is the delta
	// of sum(district.d_next_o_id) per minute of measured time, TPM the
	// delta of the commit and rollback counters per minute.
	NOPM float64 `json:"nopm,omitempty"`
	TPM  float64 `json:"tpm,omitempty"`
	// CountedBy names what NOPM and TPM were read from; ServerCountsNote
	// says why they are missing when the server could not be read.
	CountedBy        string `json:"counted_by,omitempty"`
	ServerCountsNote string `json:"server_counts_note,omitempty"`
	// ClientTPMC is the client's own count of committed New-Orders per
	// minute (beside NOPM, which the server counted).
	ClientTPMC float64 `json:"client_tpmc,omitempty"`
	// Types are per transaction type (TPC-C's five).
	Types map[string]TypeSummary `json:"types,omitempty"`
}

// TypeSummary is one transaction type over a run: completed transactions
// (rollbacks the intended ones among them), failed attempts (deadlocks,
// lock-wait timeouts, retried) and the completed ones' latency.
type TypeSummary struct {
	Count     uint64  `json:"count"`
	Rollbacks uint64  `json:"rollbacks,omitempty"`
	Errors    uint64  `json:"errors"`
	AvgUS     float64 `json:"avg_us"`
	P50US     float64 `json:"p50_us"`
	P95US     float64 `json:"p95_us"`
	P99US     float64 `json:"p99_us"`
	MaxUS     float64 `json:"max_us"`
}

// TypeInterval is one transaction type in one report interval.
type TypeInterval struct {
	Count     uint64  `json:"count"`
	Rollbacks uint64  `json:"rollbacks,omitempty"`
	Errors    uint64  `json:"errors"`
	P95US     float64 `json:"p95_us"`
}

// Fairness is sysbench's "Threads fairness" block.
type Fairness struct {
	EventsAvg    float64 `json:"events_avg"`
	EventsStddev float64 `json:"events_stddev"`
	ExecAvgS     float64 `json:"exec_avg_s"`
	ExecStddevS  float64 `json:"exec_stddev_s"`
}

// Honesty compares dbduel's query count with the server's own counter.
type Honesty struct {
	Counter       string  `json:"counter"`
	ServerQueries uint64  `json:"server_queries"`
	DbduelQueries uint64  `json:"dbduel_queries"`
	Unit          string  `json:"unit"` // what both counts count: statements or transactions
	DiffPct       float64 `json:"diff_pct"`
	Note          string  `json:"note,omitempty"`
}

// ServerTime is the server's own time executing the run's statements, so
// that a client's latency splits into server time and everything between.
type ServerTime struct {
	Source     string  `json:"source"` // performance_schema, pg_stat_statements
	Statements uint64  `json:"statements"`
	AvgUS      float64 `json:"avg_us"` // server time per statement
	// ClientAvgUS is the client's latency per statement (an event's latency
	// over its statements); BetweenUS the rest: network path, proxy,
	// scheduling, client.
	ClientAvgUS float64 `json:"client_avg_us"`
	BetweenUS   float64 `json:"between_us"`
	Note        string  `json:"note,omitempty"`
}

// Figures are what a run's summary and each of its intervals both report:
// the counts, their rates and the latency percentiles (embedded, so their
// JSON names stay at the top level of each).
type Figures struct {
	Events     uint64  `json:"events"`
	Reads      uint64  `json:"reads"`
	Writes     uint64  `json:"writes"`
	Other      uint64  `json:"other"`
	Errors     uint64  `json:"errors"`
	Reconnects uint64  `json:"reconnects"`
	TPS        float64 `json:"tps"`
	QPS        float64 `json:"qps"`
	P50US      float64 `json:"p50_us"`
	P95US      float64 `json:"p95_us"`
	P99US      float64 `json:"p99_us"`
	MaxUS      float64 `json:"max_us"`
	PctUS      float64 `json:"pct_us"` // latency at --percentile
}

// Add adds o's counts (not its rates or latencies) to f.
func (f *Figures) Add(o Figures) {
	f.Events += o.Events
	f.Reads += o.Reads
	f.Writes += o.Writes
	f.Other += o.Other
	f.Errors += o.Errors
	f.Reconnects += o.Reconnects
}

// Interval is one report interval.
type Interval struct {
	TS    float64 `json:"t_s"`
	SpanS float64 `json:"span_s"` // the time the interval covers: every rate is a count over it
	Figures
	Warmup   bool   `json:"warmup"`
	QueueLen uint64 `json:"queue_len"` // open loop: arrivals due and not yet started, counted
	// Workloads that move data (memory, fileio): reads and writes x block / span.
	ReadMiBPerS    float64 `json:"read_mib_per_s,omitempty"`
	WrittenMiBPerS float64 `json:"written_mib_per_s,omitempty"`
	// TPC-C, counted by the client for the live panels: committed
	// New-Orders and all transactions, per minute of the span.
	TPMC  float64                 `json:"tpmc,omitempty"`
	TPM   float64                 `json:"tpm,omitempty"`
	Types map[string]TypeInterval `json:"types,omitempty"`

	Concurrency  uint64    `json:"concurrency"`
	ServiceP95US float64   `json:"service_p95_us,omitempty"`
	Telemetry    Telemetry `json:"telemetry,omitzero"`
	// Noise is what else took the machine: steal_pct, other_cpu_cores,
	// psi_cpu_some_pct, flagged.
	Noise Noise `json:"noise,omitzero"`
}

// Distribution summarises one metric over a target's runs.
type Distribution struct {
	N        int     `json:"n"`
	Mean     float64 `json:"mean"`
	Median   float64 `json:"median"`
	Stddev   float64 `json:"stddev"`
	CV       float64 `json:"cv"`
	Min      float64 `json:"min"`
	Max      float64 `json:"max"`
	CILow    float64 `json:"ci_low"`
	CIHigh   float64 `json:"ci_high"`
	CIMethod string  `json:"ci_method"`
}

// PointStats are a sweep point's per-target statistics.
type PointStats struct {
	Point     int                    `json:"point"`
	Threads   int                    `json:"threads"`
	TableSize int                    `json:"table_size"`
	Stats     map[string]TargetStats `json:"stats"`
}

// TargetStats are the distributions of a target's measured runs.
type TargetStats struct {
	TPS   Distribution `json:"tps"`
	QPS   Distribution `json:"qps"`
	AvgUS Distribution `json:"avg_us"`
	P95US Distribution `json:"p95_us"`
	// TPC-C's server-counted figures, when the workload has them.
	NOPM *Distribution `json:"nopm,omitempty"`
	TPM  *Distribution `json:"tpm,omitempty"`
}

// Comparison is one target against the baseline on one metric.
type Comparison struct {
	Target    string  `json:"target"`
	Baseline  string  `json:"baseline"`
	Metric    string  `json:"metric"`
	Point     int     `json:"point"`
	Ratio     float64 `json:"ratio"`
	DeltaPct  float64 `json:"delta_pct"`
	CILowPct  float64 `json:"ci_low_pct"`
	CIHighPct float64 `json:"ci_high_pct"`
	HasCI     bool    `json:"has_ci"`
	N         int     `json:"n"`
	NBaseline int     `json:"n_baseline,omitempty"` // compare: the BASE file's runs (N is NEW's)
	Method    string  `json:"method"`
	Verdict   string  `json:"verdict"`
	// Cause is what the run measured that explains the gap (primary
	// metric only: tps, or nopm for TPC-C).
	Cause string `json:"cause,omitempty"`
	// Primary marks the metric the verdict reads (tps, or nopm for
	// TPC-C); the others are secondary.
	Primary bool `json:"primary,omitempty"`
	// Interim: the plan had not finished (a snapshot, or a plan stopped
	// early): looking at an interval and stopping when it looks good is
	// significance-based stopping.
	Interim bool `json:"interim,omitempty"`
	// Suspect: the A/A check at this point found identical targets
	// differing (a bias of the design: order, warm-up, placement).
	Suspect bool `json:"suspect,omitempty"`
	// SDLog is the per-block log-ratios' standard deviation; HalfWidthPct
	// the CI's half-width h (the interval is the estimate ×/÷ 1+h/100);
	// BlocksForTarget the blocks that spread needs for the precision
	// target (plan.precision_pct), when wider.
	SDLog           float64 `json:"sd_log,omitempty"`
	HalfWidthPct    float64 `json:"half_width_pct,omitempty"`
	BlocksForTarget int     `json:"blocks_for_target,omitempty"`
	// Equivalence is the --margin reading (TOST: the 90% CI against ±margin).
	Equivalence string `json:"equivalence,omitempty"`
	// SuspectReasons say why Suspect is set: "aa" (the A/A check failed
	// at this point), "drift" (the blocks drift, Drift).
	SuspectReasons []string `json:"suspect_reasons,omitempty"`
	// Drift is the drift check of the primary metric's log-ratios in
	// block order (from 5 blocks).
	Drift *Drift `json:"drift,omitempty"`
	// Interval is how the CI was made: its rule and its t's degrees of
	// freedom; SELog its standard error on the log-ratio scale and PValue
	// the two-sided p-value of no difference from that same t.
	Interval *IntervalRule `json:"interval,omitempty"`
	SELog    float64       `json:"se_log,omitempty"`
	PValue   float64       `json:"p_value,omitempty"`
	// CarryOver is dbduel live's order effect: the ratio in rounds where
	// the target ran before the baseline against those where it ran after
	// (≠ 0: one slice carries over into the next).
	CarryOver *CarryOver `json:"carry_over,omitempty"`
	// Anytime is dbduel live's running interval: a confidence sequence,
	// valid however often it is read (the fixed-n CI above is not).
	Anytime *Anytime `json:"anytime,omitempty"`
	// Family is the multiple-comparison procedure that decided the
	// verdict word (primary comparisons with an interval and 3 blocks or
	// more, A/A rows left out).
	Family *Family `json:"family,omitempty"`
}

// CarryOver is a live comparison's order effect (Comparison.CarryOver).
type CarryOver struct {
	DeltaPct  float64 `json:"delta_pct"`
	CILowPct  float64 `json:"ci_low_pct"`
	CIHighPct float64 `json:"ci_high_pct"`
}

// Anytime is an anytime-valid confidence sequence's interval (Comparison.Anytime).
type Anytime struct {
	LowPct  float64 `json:"low_pct"`
	HighPct float64 `json:"high_pct"`
	Method  string  `json:"method"`
}

// Drift is the drift check of one comparison (Comparison.Drift).
type Drift struct {
	Rho              float64    `json:"rho"`
	SlopePctPerBlock float64    `json:"slope_pct_per_block"`
	CI               [2]float64 `json:"ci"` // the slope's 97.5% interval, % per block
	Fired            bool       `json:"fired"`
}

// IntervalRule names how a comparison's interval was made.
type IntervalRule struct {
	// Rule: "paired-t", "paired-t-ar1" (AR(1)-corrected variance, from 8 blocks),
	// "stein" (--runs auto's two-stage interval), "welch" (compare).
	Rule string  `json:"rule"`
	DF   float64 `json:"df"`
}

// Family is the family of comparisons a verdict word was decided in.
type Family struct {
	Size   int     `json:"size"`
	Method string  `json:"method"` // "holm"
	Alpha  float64 `json:"alpha"`  // family-wise
	// PAdjusted is the comparison's Holm-adjusted p-value; Significant
	// whether it is at most Alpha.
	PAdjusted   float64 `json:"p_adjusted"`
	Significant bool    `json:"significant"`
}

// NoiseFloor is what A vs A' (the baseline and an identical copy, in the
// same interleaved plan) differ by on this machine.
type NoiseFloor struct {
	Point     int     `json:"point"`
	Metric    string  `json:"metric"`
	DeltaPct  float64 `json:"delta_pct"`
	CILowPct  float64 `json:"ci_low_pct"`
	CIHighPct float64 `json:"ci_high_pct"`
	HasCI     bool    `json:"has_ci"`
	N         int     `json:"n"`
	// NoBiasDetected: the A/A CI contains 0 (which shows no calibration:
	// a drift or a check with little power passes too). DetectablePct is
	// the bias the check finds at 80% power with this spread and these
	// blocks. Reading is the line that says so, or the warning that the
	// CI excludes 0 ("A/A: ...").
	NoBiasDetected bool    `json:"no_bias_detected"`
	DetectablePct  float64 `json:"detectable_pct,omitempty"`
	Reading        string  `json:"reading"`
}

// Parity records what differs between targets besides the thing compared.
type Parity struct {
	Versions      map[string]string `json:"versions"`
	VariablesDiff []VariableDiff    `json:"variables_diff"` // most likely to move performance first
	// BuildDiff are build facts that differ (TLS library, compiler, malloc).
	BuildDiff []VariableDiff `json:"build_diff,omitempty"`
}

// VariableDiff is a server variable with different values across targets.
type VariableDiff struct {
	Name   string            `json:"name"`
	Values map[string]string `json:"values"`
	// Rank is how likely the variable is to move performance (0: buffer
	// and log sizes; 1: flushing, durability, I/O method; 2: threads and
	// caches; 3: the rest; 4: charset and formats); the list is in its order.
	Rank int `json:"rank"`
}

// Comparison is target's comparison on metric at a sweep point (nil on a
// nil result or when there is none yet).
func (r *Result) Comparison(target, metric string, point int) *Comparison {
	if r == nil {
		return nil
	}
	for i, c := range r.Comparisons {
		if c.Target == target && c.Metric == metric && c.Point == point {
			return &r.Comparisons[i]
		}
	}
	return nil
}

// AnyTarget and AnyPoint widen Measured and Completed to every target or
// every sweep point.
const (
	AnyTarget = ""
	AnyPoint  = -1
)

// Measured are the measured runs (not warm-ups) of target at point, in
// plan order, complete or cut short.
func (r *Result) Measured(target string, point int) []Run {
	var out []Run
	for _, run := range r.Runs {
		if run.Warmup || (target != AnyTarget && run.Target != target) || (point != AnyPoint && run.Point != point) {
			continue
		}
		out = append(out, run)
	}
	return out
}

// PerBlock is each target's figure get(summary) by block, over runs.
func PerBlock(runs []Run, get func(Summary) float64) map[string]map[int]float64 {
	out := map[string]map[int]float64{}
	for _, run := range runs {
		if out[run.Target] == nil {
			out[run.Target] = map[int]float64{}
		}
		out[run.Target][run.Block] = get(run.Summary)
	}
	return out
}

// Completed are the complete runs among Measured: the ones a comparison
// may use.
func (r *Result) Completed(target string, point int) []Run {
	var out []Run
	for _, run := range r.Measured(target, point) {
		if run.Complete {
			out = append(out, run)
		}
	}
	return out
}

// CompleteBlocks are the blocks at point whose every target's run
// completed: the blocks means, Δ% and verdicts are computed from (a block
// with a run cut short is left out whole, so every figure reads the same
// blocks).
func (r *Result) CompleteBlocks(point int) map[int]bool {
	names := r.TargetNames()
	if r.Live != nil {
		// A live target that failed to restart sits out the segments
		// after: the others' rounds there are complete without it.
		names = r.targetsAt(point)
	}
	done := map[int]map[string]bool{}
	for _, run := range r.Completed(AnyTarget, point) {
		if done[run.Block] == nil {
			done[run.Block] = map[string]bool{}
		}
		done[run.Block][run.Target] = true
	}
	out := map[int]bool{}
	for b, ts := range done {
		all := len(names) > 0
		for _, n := range names {
			all = all && ts[n]
		}
		if all {
			out[b] = true
		}
	}
	return out
}

// targetsAt are the targets with a run at point, in TargetNames' order.
func (r *Result) targetsAt(point int) []string {
	seen := map[string]bool{}
	for _, run := range r.Runs {
		if run.Point == point {
			seen[run.Target] = true
		}
	}
	var out []string
	for _, n := range r.TargetNames() {
		if seen[n] {
			out = append(out, n)
		}
	}
	return out
}

// InCompleteBlocks are the runs of target at point in CompleteBlocks.
func (r *Result) InCompleteBlocks(target string, point int) []Run {
	blocks := r.CompleteBlocks(point)
	var out []Run
	for _, run := range r.Completed(target, point) {
		if blocks[run.Block] {
			out = append(out, run)
		}
	}
	return out
}

// TargetNames lists the targets baseline first (the order of --target),
// then any target that only appears in runs.
func (r *Result) TargetNames() []string {
	var names []string
	seen := map[string]bool{}
	add := func(n string) {
		if !seen[n] {
			names, seen[n] = append(names, n), true
		}
	}
	for _, t := range r.Targets {
		add(t.Name)
	}
	for _, run := range r.Runs {
		add(run.Target)
	}
	return names
}

// Clone is a deep copy of r (snapshots handed to readers never share
// memory with the result the engine keeps appending to).
func (r *Result) Clone() *Result {
	data, err := json.Marshal(r)
	if err != nil {
		panic(fmt.Sprintf("result: cannot copy: %v", err)) // every field is plain data
	}
	var c Result
	if err := json.Unmarshal(data, &c); err != nil {
		panic(fmt.Sprintf("result: cannot copy: %v", err))
	}
	return &c
}

// CloneSharingRuns is Clone but for the runs' contents, which the copy
// shares with r: a run is never changed once it is in a result (only the
// slice of runs is: appended to, or cut back by live and appended over, in
// r's own array; the copy has its own). A session's snapshot is made so
// after every run: a whole copy would cost in proportion to the runs done,
// every run.
func (r *Result) CloneSharingRuns() *Result {
	rest := *r
	rest.Runs = nil
	c := rest.Clone()
	c.Runs = slices.Clone(r.Runs)
	return c
}

// WriteFile writes r as indented JSON atomically: a temp file beside path,
// then a rename, so a crash never leaves a half-written result.
func WriteFile(path string, r *Result) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(path, append(data, '\n'), 0o600)
}

func writeAtomic(path string, data []byte, perm uint32) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, ".dbduel-*.json.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Chmod(os.FileMode(perm)); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ReadFile loads a result written by WriteFile.
func ReadFile(path string) (*Result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s is not a dbduel result: %w", path, err)
	}
	if r.SchemaVersion == 0 {
		return nil, fmt.Errorf("%s is not a dbduel result (no schema_version)", path)
	}
	if r.SchemaVersion > SchemaVersion {
		return nil, fmt.Errorf("%s was written by a newer dbduel (schema_version %d; this one reads %d)", path, r.SchemaVersion, SchemaVersion)
	}
	if err := r.check(); err != nil {
		return nil, fmt.Errorf("%s is not a consistent dbduel result: %w", path, err)
	}
	r.sanitize()
	return &r, nil
}

// Explain attributes the gap between a native server and its container to
// layers: each rung changes one thing of the rung it is compared to.
type Explain struct {
	Rungs       []Rung        `json:"rungs"`
	Attribution []Attribution `json:"attribution"`
	Metric      string        `json:"metric"` // what the deltas compare (tps)
}

// Rung is one step of the ladder, measured as a target of the plan.
type Rung struct {
	Name       string `json:"name"`
	Change     string `json:"change"`      // what this rung changes
	ComparedTo string `json:"compared_to"` // the rung it changes one thing of ("" for native)
	// DeltaPct is the throughput change against ComparedTo (negative:
	// slower), the geometric mean of per-block ratios with its paired CI.
	DeltaPct         float64 `json:"delta_pct"`
	CILowPct         float64 `json:"ci_low_pct"`
	CIHighPct        float64 `json:"ci_high_pct"`
	HasCI            bool    `json:"has_ci"`
	N                int     `json:"n"`
	DeltaVsNativePct float64 `json:"delta_vs_native_pct"`
	// The cumulative contrast against native with its own paired CI (not
	// the sum of the steps': adjacent steps share a rung, so their
	// estimates are negatively correlated).
	VsNativeCILowPct  float64 `json:"vs_native_ci_low_pct"`
	VsNativeCIHighPct float64 `json:"vs_native_ci_high_pct"`
	VsNativeHasCI     bool    `json:"vs_native_has_ci"`
	// The step in log points (100·ln of the ratio against ComparedTo) with
	// its CI; StepReading says "not distinguishable from 0" when it spans 0.
	StepLogPoints       float64        `json:"step_log_points"`
	StepCILowLogPoints  float64        `json:"step_ci_low_log_points"`
	StepCIHighLogPoints float64        `json:"step_ci_high_log_points"`
	StepReading         string         `json:"step_reading,omitempty"`
	Evidence            map[string]any `json:"evidence"`
	Valid               bool           `json:"valid"`
	Invalid             string         `json:"invalid,omitempty"` // why the evidence contradicts the label
}

// Attribution is one layer's share of the total gap (native to the
// default container): the layers' log-ratios add up to the total's.
type Attribution struct {
	Layer     string  `json:"layer"`
	From      string  `json:"from"`
	To        string  `json:"to"`
	DeltaPct  float64 `json:"delta_pct"`
	CILowPct  float64 `json:"ci_low_pct"`
	CIHighPct float64 `json:"ci_high_pct"`
	HasCI     bool    `json:"has_ci"`
	// SharePct is the layer's share of the total gap's log-ratio, over the
	// blocks every rung of the path completed (so the shares add to 100%),
	// with its Fieller CI (the step and the total are correlated); only when the total's CI excludes 0
	// (HasShare), since a share of a gap not shown to exist explodes.
	SharePct        float64 `json:"share_pct"`
	ShareCILowPct   float64 `json:"share_ci_low_pct"`
	ShareCIHighPct  float64 `json:"share_ci_high_pct"`
	HasShare        bool    `json:"has_share"`
	StepLogPoints   float64 `json:"step_log_points"`
	StepCILowLogPt  float64 `json:"step_ci_low_log_points"`
	StepCIHighLogPt float64 `json:"step_ci_high_log_points"`
}

// check refuses a result whose runs point outside its plan (a file edited
// by hand, or not dbduel's): every reader may then index the plan by them.
func (r *Result) check() error {
	points := max(len(r.Plan.Points), 1)
	for i, run := range r.Runs {
		switch {
		case run.Point < 0 || run.Point >= points:
			return fmt.Errorf("run %d (target %q) is at point %d; the plan has %d", i+1, run.Target, run.Point, points)
		case run.Block < 0 || run.Index < 0:
			return fmt.Errorf("run %d (target %q) has block %d, index %d", i+1, run.Target, run.Block, run.Index)
		}
	}
	for i, p := range r.NoiseFloors {
		if p.Point < 0 || p.Point >= points {
			return fmt.Errorf("noise floor %d is at point %d; the plan has %d", i+1, p.Point, points)
		}
	}
	for i, c := range r.Comparisons {
		if c.Point < 0 || c.Point >= points {
			return fmt.Errorf("comparison %d is at point %d; the plan has %d", i+1, c.Point, points)
		}
	}
	return nil
}
