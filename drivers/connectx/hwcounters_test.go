package connectx

import (
	"strings"
	"testing"
)

// catOutput is what `cat` prints over hwCounterFiles when every file but
// those in absent exists: "%llu\n" per file (counters.c's format), and
// GNU cat's complaint per absent file.
func catOutput(dev string, vals map[string]uint64, absent ...string) (stdout, stderr string) {
	var o, e strings.Builder
	skip := map[string]bool{}
	for _, a := range absent {
		skip[a] = true
	}
	for _, f := range hwCounterFiles(dev) {
		name := f[strings.LastIndexByte(f, '/')+1:]
		if skip[name] {
			e.WriteString("cat: " + f + ": No such file or directory\n")
			continue
		}
		o.WriteString(FormatHWCounter(vals[name]))
	}
	return o.String(), e.String()
}

func TestParseHWCounters(t *testing.T) {
	vals := map[string]uint64{"out_of_sequence": 17, "np_cnp_sent": 4242, "rp_cnp_handled": 4100,
		"np_ecn_marked_roce_packets": 9001, "local_ack_timeout_err": 2, "packet_seq_err": 18446744073709551615}
	for _, tc := range []struct {
		name   string
		absent []string
	}{
		{"every counter", nil},
		// a ConnectX-4 Lx without the RoCE acceleration and congestion
		// capability bits lacks those groups
		{"firmware without some groups", []string{"roce_adp_retrans", "roce_adp_retrans_to", "roce_slow_restart",
			"roce_slow_restart_cnps", "roce_slow_restart_trans", "rp_cnp_ignored", "rx_icrc_encapsulated"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut := catOutput("mlx5_1", vals, tc.absent...)
			got, err := ParseHWCounters("mlx5_1", out, errOut)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(hwCounterNames())-len(tc.absent) {
				t.Errorf("%d counters, want %d", len(got), len(hwCounterNames())-len(tc.absent))
			}
			for _, a := range tc.absent {
				if _, ok := got[a]; ok {
					t.Errorf("absent %s reported", a)
				}
			}
			for name, v := range vals {
				if got[name] != v {
					t.Errorf("%s = %d, want %d", name, got[name], v)
				}
			}
		})
	}
	if !strings.HasPrefix(HWCountersCommand("mlx5_0"), "cat /sys/class/infiniband/mlx5_0/ports/1/hw_counters/rx_write_requests ") {
		t.Errorf("command %q", HWCountersCommand("mlx5_0"))
	}
}

func TestParseHWCountersErrors(t *testing.T) {
	out, _ := catOutput("mlx5_0", nil)
	for _, tc := range []struct{ name, stdout, stderr, want string }{
		{"permission", out, "cat: /sys/class/infiniband/mlx5_0/ports/1/hw_counters/out_of_buffer: Permission denied\n", "Permission denied"},
		{"too few values", "1\n2\n", "", "2 values"},
		{"too many values", out + "7\n", "", "values for"},
		{"not a number", strings.Replace(out, "0\n", "x\n", 1), "", `rx_write_requests: "x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseHWCounters("mlx5_0", tc.stdout, tc.stderr)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "mlx5_0") {
				t.Errorf("want an error naming mlx5_0 and %q, got %v", tc.want, err)
			}
		})
	}
}

func FuzzParseHWCounters(f *testing.F) {
	out, errOut := catOutput("mlx5_0", map[string]uint64{"np_cnp_sent": 3}, "rp_cnp_ignored")
	f.Add(out, errOut)
	f.Add("1 2 3", "cat: x: No such file or directory\n")
	f.Fuzz(func(t *testing.T, stdout, stderr string) {
		m, err := ParseHWCounters("mlx5_0", stdout, stderr)
		if err == nil && len(m) > len(hwCounterNames()) {
			t.Fatalf("%d counters from %d files", len(m), len(hwCounterNames()))
		}
	})
}
