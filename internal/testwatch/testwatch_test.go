package testwatch_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/internal/testwatch"
)

// waitForever blocks on release; it is the stuck step's call.
func waitForever(release <-chan struct{}) { <-release }

// stuckStep is a step whose goroutine the watchdog must report.
func stuckStep(release <-chan struct{}, started chan<- struct{}) {
	close(started)
	waitForever(release)
}

func TestStuckStepIsReported(t *testing.T) {
	t.Parallel()
	release, started := make(chan struct{}), make(chan struct{})
	defer close(release)
	go stuckStep(release, started)
	<-started
	var out bytes.Buffer // read only after Exit: the channel orders it after the write
	exited := make(chan int, 1)
	w := testwatch.Watch{After: 20 * time.Millisecond, Focus: []string{"testwatch_test.stuckStep"}, Out: &out, Exit: func(c int) { exited <- c }, DumpDir: t.TempDir()}
	stop := w.Start("the step under test")
	defer stop()
	select {
	case code := <-exited:
		if code == 0 {
			t.Errorf("exit code 0: a stuck step must fail the binary")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the watchdog did not fire")
	}
	report := out.String()
	t.Log(report)
	for _, want := range []string{
		"the step under test is still running after 20ms",
		"[chan receive",
		"internal/testwatch_test.waitForever",
		"internal/testwatch_test.stuckStep",
		"testwatch: the step's goroutines (1):",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	// the step's goroutine comes last, where a log's tail keeps it
	if i, j := strings.Index(report, "other labctl goroutines"), strings.Index(report, "waitForever"); i < 0 || j < i {
		t.Errorf("the stuck goroutine is not printed after the summary:\n%s", report)
	}
	if strings.Contains(report, "/usr/local/go/") || strings.Contains(report, ".go:") {
		t.Errorf("report prints file lines; it should print functions only:\n%s", report)
	}
}

func TestStoppedWatchdogStaysQuiet(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	exited := make(chan int, 1)
	w := testwatch.Watch{After: 30 * time.Millisecond, Out: &out, Exit: func(c int) { exited <- c }}
	w.Start("a quick step")()
	select {
	case <-exited:
		t.Fatalf("a stopped watchdog fired:\n%s", out.String())
	case <-time.After(150 * time.Millisecond):
	}
}

func TestReportGroupsOtherGoroutines(t *testing.T) {
	t.Parallel()
	dump := "goroutine 1 [running]:\nmain.main()\n\t/x/main.go:3 +0x1\n\n" +
		"goroutine 7 [select, 2 minutes]:\ngithub.com/labctl/labctl/emulator/sshd.(*Server).Start.func2()\n\t/w/server.go:182 +0x67\ncreated by github.com/labctl/labctl/emulator/sshd.(*Server).Start in goroutine 5\n\t/w/server.go:181 +0x32b\n\n" +
		"goroutine 8 [select, 2 minutes]:\ngithub.com/labctl/labctl/emulator/sshd.(*Server).Start.func2()\n\t/w/server.go:182 +0x67\ncreated by github.com/labctl/labctl/emulator/sshd.(*Server).Start in goroutine 5\n\t/w/server.go:181 +0x32b\n\n" +
		"goroutine 9 [IO wait, 3 minutes]:\ninternal/poll.runtime_pollWait(0x1, 0x72)\n\t/go/netpoll.go:351 +0x85\ngithub.com/labctl/labctl/provision_test.dropOnce(0xc0, 0x1)\n\t/w/dropsweep_test.go:250 +0x1\n"
	r := testwatch.Report("drop at 3ms", time.Minute, dump, []string{"provision_test.dropOnce"}, "/tmp/d.txt")
	for _, want := range []string{
		"    2 [select, 2 minutes] emulator/sshd.(*Server).Start.func2\n",
		"goroutine 9 [IO wait, 3 minutes]:\n  internal/poll.runtime_pollWait\n  provision_test.dropOnce\n",
		"testwatch: the step's goroutines (1):",
		"(every goroutine's stack: /tmp/d.txt)",
	} {
		if !strings.Contains(r, want) {
			t.Errorf("report lacks %q:\n%s", want, r)
		}
	}
	if strings.Contains(r, "main.main") {
		t.Errorf("report counts a goroutine with no labctl frame:\n%s", r)
	}
}
