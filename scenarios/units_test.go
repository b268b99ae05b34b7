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
