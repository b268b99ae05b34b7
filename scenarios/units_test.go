package scenarios

import "testing"

func TestParseBytes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		bad  bool
	}{
		{"4096", 4096, false},
		{"64KiB", 65536, false},
		{"1MiB", 1 << 20, false},
		{"1.5MB", 1500000, false},
		{"64M", 64 << 20, false},
		{"2 GiB", 2 << 30, false},
		{"", 0, true},
		{"lots", 0, true},
		{"-1MiB", 0, true},
	} {
		got, err := ParseBytes(tc.in)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d, bad=%v", tc.in, got, err, tc.want, tc.bad)
		}
	}
}

// FuzzParseBytes: a size from a scenario is a non-negative byte count or
// refused: NaN, infinities and values past int64 are refused, not wrapped.
func FuzzParseBytes(f *testing.F) {
	for _, s := range []string{"4096", "64KiB", "1MiB", "1.5MB", "NaN", "Inf", "-1", "1e30", "9223372036854775807", "+Inf KiB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if v, err := ParseBytes(s); err == nil && v < 0 {
			t.Fatalf("%q: %d bytes", s, v)
		}
	})
}
