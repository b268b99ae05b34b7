package connectx

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// DevInfo is one device in `ibv_devinfo` output.
type DevInfo struct {
	HCAID, Transport, FWVer, NodeGUID, SysImageGUID, VendorID string
	VendorPartID                                              int
	HWVer, BoardID                                            string
	Ports                                                     []DevPort
}

// DevPort is one port of a device.
type DevPort struct {
	Num               int
	State             string // "PORT_ACTIVE (4)"
	MaxMTU, ActiveMTU int
	SMLID, PortLID    int
	PortLMC           string
	LinkLayer         string
}

// mtuCode is the verbs enum printed after the MTU: 256..4096 -> 1..5.
func mtuCode(m int) int {
	for c, v := 1, 256; v <= 4096; c, v = c+1, v*2 {
		if v == m {
			return c
		}
	}
	return 0
}

// FormatDevInfo prints devices as rdma-core's devinfo does (tabs literal,
// a blank line after each port).
func FormatDevInfo(w io.Writer, devs []DevInfo) error {
	b := bufio.NewWriter(w)
	for _, d := range devs {
		fmt.Fprintf(b, "hca_id:\t%s\n", d.HCAID)
		fmt.Fprintf(b, "\ttransport:\t\t\t%s\n", d.Transport)
		fmt.Fprintf(b, "\tfw_ver:\t\t\t\t%s\n", d.FWVer)
		fmt.Fprintf(b, "\tnode_guid:\t\t\t%s\n", d.NodeGUID)
		fmt.Fprintf(b, "\tsys_image_guid:\t\t\t%s\n", d.SysImageGUID)
		fmt.Fprintf(b, "\tvendor_id:\t\t\t%s\n", d.VendorID)
		fmt.Fprintf(b, "\tvendor_part_id:\t\t\t%d\n", d.VendorPartID)
		fmt.Fprintf(b, "\thw_ver:\t\t\t\t%s\n", d.HWVer)
		fmt.Fprintf(b, "\tboard_id:\t\t\t%s\n", d.BoardID)
		fmt.Fprintf(b, "\tphys_port_cnt:\t\t\t%d\n", len(d.Ports))
		for _, p := range d.Ports {
			fmt.Fprintf(b, "\t\tport:\t%d\n", p.Num)
			fmt.Fprintf(b, "\t\t\tstate:\t\t\t%s\n", p.State)
			fmt.Fprintf(b, "\t\t\tmax_mtu:\t\t%d (%d)\n", p.MaxMTU, mtuCode(p.MaxMTU))
			fmt.Fprintf(b, "\t\t\tactive_mtu:\t\t%d (%d)\n", p.ActiveMTU, mtuCode(p.ActiveMTU))
			fmt.Fprintf(b, "\t\t\tsm_lid:\t\t\t%d\n", p.SMLID)
			fmt.Fprintf(b, "\t\t\tport_lid:\t\t%d\n", p.PortLID)
			fmt.Fprintf(b, "\t\t\tport_lmc:\t\t%s\n", p.PortLMC)
			fmt.Fprintf(b, "\t\t\tlink_layer:\t\t%s\n\n", p.LinkLayer)
		}
	}
	return b.Flush()
}

// ParseDevInfo reads `ibv_devinfo` output.
func ParseDevInfo(out string) ([]DevInfo, error) {
	var devs []DevInfo
	var d *DevInfo
	var p *DevPort
	for n, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		if k == "hca_id" {
			devs = append(devs, DevInfo{HCAID: v})
			d, p = &devs[len(devs)-1], nil
			continue
		}
		if d == nil {
			return nil, fmt.Errorf("ibv_devinfo: line %d: %q before any hca_id", n+1, line)
		}
		// "1024 (3)": the number before the name. A field without one is
		// refused (a truncated line), not read as 0.
		bad := false
		num := func(s string) int {
			f := strings.Fields(s)
			if len(f) == 0 {
				bad = true
				return 0
			}
			i, _ := strconv.Atoi(f[0])
			return i
		}
		switch k {
		case "transport":
			d.Transport = v
		case "fw_ver":
			d.FWVer = v
		case "node_guid":
			d.NodeGUID = v
		case "sys_image_guid":
			d.SysImageGUID = v
		case "vendor_id":
			d.VendorID = v
		case "vendor_part_id":
			d.VendorPartID = num(v)
		case "hw_ver":
			d.HWVer = v
		case "board_id":
			d.BoardID = v
		case "port":
			d.Ports = append(d.Ports, DevPort{Num: num(v)})
			p = &d.Ports[len(d.Ports)-1]
		}
		if bad {
			return nil, fmt.Errorf("ibv_devinfo: line %d: %q has no number", n+1, line)
		}
		if p == nil {
			continue
		}
		switch k {
		case "state":
			p.State = v
		case "max_mtu":
			p.MaxMTU = num(v)
		case "active_mtu":
			p.ActiveMTU = num(v)
		case "sm_lid":
			p.SMLID = num(v)
		case "port_lid":
			p.PortLID = num(v)
		case "port_lmc":
			p.PortLMC = v
		case "link_layer":
			p.LinkLayer = v
		}
		if bad {
			return nil, fmt.Errorf("ibv_devinfo: line %d: %q has no number", n+1, line)
		}
	}
	if len(devs) == 0 {
		return nil, fmt.Errorf("ibv_devinfo: no device in output")
	}
	return devs, nil
}
