package connectx

import (
	"bytes"
	"net"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func golden(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestMlnxQoSGoldenAndRoundTrip(t *testing.T) {
	q := DefaultQoS()
	q.Trust = "dscp"
	q.PFCEnabled[3], q.PrioBuffer[3] = true, 1
	var b bytes.Buffer
	if err := FormatMlnxQoS(&b, q); err != nil {
		t.Fatal(err)
	}
	if want := golden(t, "mlnx_qos_dscp.txt"); b.String() != want {
		t.Fatalf("mlnx_qos layout differs:\n got %q\nwant %q", b.String(), want)
	}
	back, err := ParseMlnxQoS(b.String())
	if err != nil || !reflect.DeepEqual(back, q) {
		t.Fatalf("round trip: %v\n got %+v\nwant %+v", err, back, q)
	}
	var d bytes.Buffer
	FormatMlnxQoS(&d, DefaultQoS())
	if strings.Contains(d.String(), "dscp2prio") {
		t.Error("pcp trust must not print the dscp2prio block")
	}
}

func TestMlnxQoSVersionDrift(t *testing.T) {
	// Older builds: a default priority line, no max_buffer_size, 8-space tabs.
	out := strings.ReplaceAll(golden(t, "mlnx_qos_dscp.txt"), "\t", "        ")
	out = strings.Replace(out, "Priority trust state: dscp\n", "Priority trust state: dscp\ndefault priority:\n", 1)
	out = strings.Replace(out, ",max_buffer_size=262016", "", 1)
	q, err := ParseMlnxQoS(out)
	if err != nil {
		t.Fatal(err)
	}
	if !q.PFCEnabled[3] || q.MaxBufferSize != 0 || q.RxBufferSizes[0] != 130944 || len(q.TCs) != 8 || q.DSCP2Prio[26] != 3 {
		t.Errorf("parsed %+v", q)
	}
}

func TestShowGIDs(t *testing.T) {
	mac, _ := net.ParseMAC("0c:42:a1:5d:4d:b8")
	gids := StandardGIDs("mlx5_0", "ens1f0", mac, net.ParseIP("172.19.0.60"))
	var b bytes.Buffer
	FormatShowGIDs(&b, gids)
	if want := golden(t, "show_gids.txt"); b.String() != want {
		t.Fatalf("show_gids differs:\n got %q\nwant %q", b.String(), want)
	}
	back, err := ParseShowGIDs(b.String())
	if err != nil || !reflect.DeepEqual(back, gids) {
		t.Fatalf("round trip %v: %+v", err, back)
	}
	if gids[3].Index != 3 || gids[3].Ver != "v2" || gids[3].IPv4 != "172.19.0.60" {
		t.Errorf("index 3 must be the RoCE v2 IPv4 GID: %+v", gids[3])
	}
}

func TestDevInfo(t *testing.T) {
	d := []DevInfo{{HCAID: "mlx5_0", Transport: "InfiniBand (0)", FWVer: "16.35.2000", NodeGUID: "0c42:a103:0065:a9b2", SysImageGUID: "0c42:a103:0065:a9b2",
		VendorID: "0x02c9", VendorPartID: 4119, HWVer: "0x0", BoardID: "MT_0000000008",
		Ports: []DevPort{{Num: 1, State: "PORT_ACTIVE (4)", MaxMTU: 4096, ActiveMTU: 4096, PortLMC: "0x00", LinkLayer: "Ethernet"}}}}
	var b bytes.Buffer
	FormatDevInfo(&b, d)
	if want := golden(t, "ibv_devinfo.txt"); b.String() != want {
		t.Fatalf("ibv_devinfo differs:\n got %q\nwant %q", b.String(), want)
	}
	back, err := ParseDevInfo(b.String())
	if err != nil || !reflect.DeepEqual(back, d) {
		t.Fatalf("round trip %v: %+v", err, back)
	}
}

func TestEthtool(t *testing.T) {
	c := RNICCounters{TxBytes: 1 << 30, TxPkts: 262144}
	c.PauseRx[3], c.PauseRxDurationUs[3] = 17, 2900
	var b bytes.Buffer
	FormatEthtoolStats(&b, MLX5Stats(c))
	if !strings.HasPrefix(b.String(), "NIC statistics:\n     rx_vport_rdma_unicast_packets: 0\n") {
		t.Errorf("layout: %q", b.String()[:80])
	}
	vals, order, err := ParseEthtoolStats(b.String())
	if err != nil {
		t.Fatal(err)
	}
	if vals["rx_prio3_pause"] != 17 || vals["tx_vport_rdma_unicast_bytes"] != 1<<30 || vals["rx_pause_ctrl_phy"] != 17 || order[0] != "rx_vport_rdma_unicast_packets" {
		t.Errorf("values %v", vals)
	}
	for _, n := range order {
		if strings.Contains(n, "pfc") {
			t.Errorf("%s is not an mlx5 counter name", n)
		}
	}
}

func FuzzParseMlnxQoS(f *testing.F) {
	b, _ := os.ReadFile("testdata/mlnx_qos_dscp.txt")
	f.Add(string(b))
	f.Fuzz(func(t *testing.T, s string) { _, _ = ParseMlnxQoS(s) })
}

func FuzzParseShowGIDs(f *testing.F) {
	for _, p := range []string{"testdata/show_gids.txt", "testdata/show_gids_ib_port.txt"} {
		b, _ := os.ReadFile(p)
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, s string) {
		gids, err := ParseShowGIDs(s)
		if err != nil {
			return
		}
		// what was read prints back (as the emulator would) to the same rows
		var b bytes.Buffer
		if err := FormatShowGIDs(&b, gids); err != nil {
			t.Fatal(err)
		}
		again, err := ParseShowGIDs(b.String())
		if err != nil || !reflect.DeepEqual(again, gids) {
			t.Fatalf("format/parse round trip: %v\n got %+v\nwant %+v", err, again, gids)
		}
	})
}

func FuzzParseDevInfo(f *testing.F) {
	b, _ := os.ReadFile("testdata/ibv_devinfo.txt")
	f.Add(string(b))
	f.Fuzz(func(t *testing.T, s string) { _, _ = ParseDevInfo(s) })
}

// The seed follows ethtool -S's layout on mlx5 (hardware-surfaces 2.7): a
// header line, then five spaces, name, colon, value.
func FuzzParseEthtoolStats(f *testing.F) {
	b, _ := os.ReadFile("testdata/ethtool_S.txt")
	f.Add(string(b))
	f.Add("NIC statistics:\n     rx_prio3_pause: 5\n")
	f.Fuzz(func(t *testing.T, s string) { _, _, _ = ParseEthtoolStats(s) })
}

func TestDebugfsAndPCILinkParsers(t *testing.T) {
	pci, err := ParsePCILink("../../../0000:3b:00.1\n")
	if err != nil || pci != "0000:3b:00.1" {
		t.Fatalf("%q %v", pci, err)
	}
	if _, err := ParsePCILink("/sys/devices/virtual/net/lo\n"); err == nil {
		t.Fatal("a virtual device has no PCI address")
	}
	var vals []string
	d := DebugfsDefaults()
	for _, f := range DebugfsFiles() {
		vals = append(vals, strconv.Itoa(d[f]))
	}
	st, err := ParseDebugfs("/d", strings.Join(vals, "\n")+"\n", "")
	if err != nil || st.RP["rpg_ai_rate"] != 5 || st.NP["cnp_802p_prio"] != 6 || st.CNPPrioMode != 0 || len(st.Missing) != 0 {
		t.Fatalf("%+v %v", st, err)
	}
}

// An older kernel's cc_params lack rp_max_rate and
// np_min_time_between_cnps: cat prints the others and names those two.
func TestDebugfsOfAnOlderKernel(t *testing.T) {
	d := DebugfsDefaults()
	var vals []string
	stderr := ""
	for _, f := range DebugfsFiles() {
		if f == "rp_max_rate" || f == "np_min_time_between_cnps" {
			stderr += "cat: /d/" + f + ": No such file or directory\n"
			continue
		}
		vals = append(vals, strconv.Itoa(d[f]))
	}
	st, err := ParseDebugfs("/d", strings.Join(vals, "\n")+"\n", stderr)
	if err != nil || strings.Join(st.Missing, " ") != "roce_np/min_time_between_cnps roce_rp/rpg_max_rate" || st.RP["rpg_ai_rate"] != 5 {
		t.Fatalf("%+v %v", st, err)
	}
	if _, err := ParseDebugfs("/d", strings.Join(vals[1:], "\n"), stderr); err == nil || !strings.Contains(err.Error(), "values for") {
		t.Fatalf("a short read: %v", err)
	}
	if _, err := ParseDebugfs("/d", "", "cat: /d/rp_gd: Permission denied\n"); err == nil || !strings.Contains(err.Error(), "Permission denied") {
		t.Fatalf("not root: %v", err)
	}
	none := ""
	for _, p := range DebugfsPaths("/d") {
		none += "cat: " + p + ": No such file or directory\n"
	}
	if _, err := ParseDebugfs("/d", "", none); err == nil || !strings.Contains(err.Error(), "no cc_params files") {
		t.Fatalf("no files at all: %v", err)
	}
}

func FuzzParseDebugfs(f *testing.F) {
	f.Add("1\n2\n3\n", "cat: /d/rp_max_rate: No such file or directory\n")
	f.Fuzz(func(t *testing.T, out, stderr string) { _, _ = ParseDebugfs("/d", out, stderr) })
}

func FuzzParseECN(f *testing.F) {
	f.Add("1\n0\n")
	f.Fuzz(func(t *testing.T, s string) { _, _ = ParseECN("ens1f0", s) })
}

func FuzzParseMlnxQoSOptions(f *testing.F) {
	f.Add("set,26,3", "0,0,0,1,0,0,0,0")
	f.Fuzz(func(t *testing.T, d, l string) {
		_, _, _, _ = ParseDSCP2Prio(d)
		_, _ = ParseIntList("prio2buffer", l, 7)
		_, _ = ParsePCILink(l)
	})
}
