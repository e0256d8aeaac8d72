// Package hostinfo is the one home of what dbduel reads about the machine
// itself, from /proc, /sys, cgroup files and mountinfo: the system facts
// beside a micro-benchmark's figure (ReadFacts), the environment
// fingerprint of a result (ReadEnvironment), the per-interval noise probe
// (NoiseSampler), a process's CPU time and syscall filter, and the one
// mountinfo parser (MountAt).
package hostinfo
