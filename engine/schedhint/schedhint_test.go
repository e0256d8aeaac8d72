package schedhint

import (
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// customSlices says whether this kernel keeps a SCHED_OTHER slice (6.12+).
func customSlices(t *testing.T) bool {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		t.Fatal(err)
	}
	rel := unix.ByteSliceToString(u.Release[:])
	parts := strings.SplitN(rel, ".", 3)
	major, _ := strconv.Atoi(parts[0])
	minor := 0
	if len(parts) > 1 {
		minor, _ = strconv.Atoi(strings.TrimFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }))
	}
	return major > 6 || major == 6 && minor >= 12
}

// Every thread gets the slice, threads made afterwards inherit it, and each
// keeps its nice value.
func TestApplySetsEveryThreadAndNewThreadsInherit(t *testing.T) {
	want := customSlices(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid := unix.Gettid()
	nice, err := unix.Getpriority(unix.PRIO_PROCESS, tid)
	if err != nil {
		t.Fatal(err)
	}
	kept, err := Apply(300 * time.Microsecond)
	if err != nil {
		t.Fatal(err)
	}
	if kept != want {
		t.Fatalf("kernel kept the slice: %v, expected %v for this kernel", kept, want)
	}
	if !want {
		return
	}
	if got := Slice(tid); got != 300*time.Microsecond {
		t.Fatalf("this thread's slice %v, want 300µs", got)
	}
	if after, _ := unix.Getpriority(unix.PRIO_PROCESS, tid); after != nice {
		t.Fatalf("nice changed from %d to %d", nice, after)
	}
	// Goroutines locked to threads at once force the runtime to make new
	// ones; each must report the inherited slice.
	const n = 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	slices := map[int]time.Duration{}
	release := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			id := unix.Gettid()
			mu.Lock()
			slices[id] = Slice(id)
			mu.Unlock()
			<-release // hold the thread so the next goroutine needs another
		}()
	}
	time.Sleep(100 * time.Millisecond)
	close(release)
	wg.Wait()
	if len(slices) != n {
		t.Fatalf("%d distinct threads, want %d", len(slices), n)
	}
	for id, s := range slices {
		if s != 300*time.Microsecond {
			t.Errorf("thread %d made after Apply has slice %v, want 300µs", id, s)
		}
	}
	if _, err := Apply(MinSlice); err != nil {
		t.Fatal(err)
	}
}

func TestFromEnv(t *testing.T) {
	for _, c := range []struct {
		val  string
		want time.Duration
		bad  bool
	}{
		{"", 0, false},
		{"100us", MinSlice, false},
		{"0", 0, false},
		{"off", 0, false},
		{"250us", 250 * time.Microsecond, false},
		{"fast", 0, true},
		{"-1ms", 0, true},
	} {
		t.Setenv("DBDUEL_SCHED_SLICE", c.val)
		got, err := FromEnv()
		if (err != nil) != c.bad || got != c.want {
			t.Errorf("DBDUEL_SCHED_SLICE=%q: %v, %v; want %v (error %v)", c.val, got, err, c.want, c.bad)
		}
	}
}
