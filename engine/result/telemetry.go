package result

// The keys of an interval's telemetry (what was measured of the target
// while it ran) and of its noise (what else took the machine): one list,
// read by everyone who writes or reads them. Their units are in their names.
const (
	TelServerCPUCores     = "server_cpu_cores"      // the server's CPU (its process, or its container's cgroup)
	TelServerIdleCPUCores = "server_idle_cpu_cores" // the server's CPU before the load (its background work)
	TelServerMemBytes     = "server_mem_bytes"
	TelProxyCPUCores      = "proxy_cpu_cores"      // docker-proxy's or rootlessport's CPU
	TelProxyCPUCoresNote  = "proxy_cpu_cores_note" // why the proxy's CPU was not measured
	TelClientCPUCores     = "client_cpu_cores"     // an agent's (client=netns|beside) CPU
	TelNetRxBytesPerS     = "server_net_rx_bytes_per_s"
	TelNetTxBytesPerS     = "server_net_tx_bytes_per_s"
	TelCPUThrottledPct    = "cpu_throttled_pct" // CFS periods throttled
	TelCPUThrottledS      = "cpu_throttled_s"
)

const (
	NoiseStealPct       = "steal_pct"
	NoiseKernelCPUCores = "kernel_cpu_cores"
	NoiseOtherCPUCores  = "other_cpu_cores" // other processes' CPU
	NoisePSICPUSomePct  = "psi_cpu_some_pct"
	NoiseThrottledPct   = "throttled_pct"
	NoiseFlagged        = "flagged" // a bool: the interval was noisy
)
