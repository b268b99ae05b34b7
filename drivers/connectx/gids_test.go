package connectx

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// TestShowGIDsIBPortWithoutNetdev: a host with an InfiniBand port (no
// netdev, DEV column empty) beside a RoCE port. The IB row parses with an
// empty Netdev, the RoCE rows keep theirs, and the formatter the emulator
// prints with writes the same bytes back.
func TestShowGIDsIBPortWithoutNetdev(t *testing.T) {
	t.Parallel()
	const ll, v4 = "fe80:0000:0000:0000:0e42:a1ff:fe5d:4db8", "0000:0000:0000:0000:0000:ffff:ac13:003c"
	want := []GID{
		{Dev: "mlx5_0", Port: 1, Index: 0, GID: "fe80:0000:0000:0000:0c42:a103:0065:a9b2", Ver: "v1"},
		{Dev: "mlx5_1", Port: 1, Index: 0, GID: ll, Ver: "v1", Netdev: "ens1f0"},
		{Dev: "mlx5_1", Port: 1, Index: 1, GID: ll, Ver: "v2", Netdev: "ens1f0"},
		{Dev: "mlx5_1", Port: 1, Index: 2, GID: v4, IPv4: "172.19.0.60", Ver: "v1", Netdev: "ens1f0"},
		{Dev: "mlx5_1", Port: 1, Index: 3, GID: v4, IPv4: "172.19.0.60", Ver: "v2", Netdev: "ens1f0"},
	}
	text := golden(t, "show_gids_ib_port.txt")
	for _, tc := range []struct{ name, out string }{
		{"tabs", text},
		{"tabs as spaces", strings.ReplaceAll(text, "\t", "    ")},
	} {
		got, err := ParseShowGIDs(tc.out)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: %v\n got %+v\nwant %+v", tc.name, err, got, want)
		}
	}
	var roce []int
	for _, g := range want {
		if g.Ver == "v2" && g.IPv4 != "" && g.Netdev == "ens1f0" {
			roce = append(roce, g.Index)
		}
	}
	if !reflect.DeepEqual(roce, []int{3}) {
		t.Errorf("RoCE v2 IPv4 rows: indexes %v, want [3]", roce)
	}
	var b bytes.Buffer
	if err := FormatShowGIDs(&b, want); err != nil || b.String() != text {
		t.Errorf("formatter differs from the sample (%v):\n got %q\nwant %q", err, b.String(), text)
	}
}

func TestShowGIDsRows(t *testing.T) {
	t.Parallel()
	const g = "fe80:0000:0000:0000:0c42:a103:0065:a9b2"
	for _, tc := range []struct {
		name, row string
		want      GID
		bad       bool
	}{
		{name: "IB, no VER (types unreadable)", row: "mlx5_0\t1\t0\t" + g + "\t\t\t\t",
			want: GID{Dev: "mlx5_0", Port: 1, Index: 0, GID: g}},
		{name: "netdev after VER", row: "mlx5_0\t1\t0\t" + g + "\t\t\tv2\teth2",
			want: GID{Dev: "mlx5_0", Port: 1, Index: 0, GID: g, Ver: "v2", Netdev: "eth2"}},
		{name: "mapped IPv6 is no IPv4 column", row: "mlx5_0\t1\t0\t" + g + "\t::ffff:1.2.3.4\tv2\teth2", bad: true},
		{name: "extra column", row: "mlx5_0\t1\t0\t" + g + "\t\t\tv2\teth2\tx", bad: true},
		{name: "bad index", row: "mlx5_0\t1\tx\t" + g + "\t\t\tv2\teth2", bad: true},
	} {
		got, err := ParseShowGIDs(tc.row + "\n")
		if tc.bad {
			if err == nil {
				t.Errorf("%s: parsed %+v, want an error", tc.name, got)
			}
			continue
		}
		if err != nil || len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s: %v %+v, want %+v", tc.name, err, got, tc.want)
		}
	}
}
