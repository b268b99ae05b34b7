package netconf

import (
	"encoding/xml"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/labctl/labctl/drivers/switchqos"
)

// QoSNamespace is labctl's QoS data model over NETCONF. OpenConfig has no
// PFC model (hardware-surfaces reference, section 4.2) and vendors differ
// (Junos class-of-service), so emulated switches serve this one; a real
// device needs its own mapping of the same QoS values. The model, under
// <qos xmlns="urn:labctl:qos">:
//
//	pfc/priority[id]/enabled                      lossless priorities
//	buffer/xoff-bytes, xon-bytes                  static PFC thresholds
//	buffer/alpha                                  dynamic PFC threshold (0: static)
//	buffer/headroom-bytes                         per port and lossless priority group
//	buffer/pools/pool[name]/size-bytes            lossless, lossy
//	classifier/dscp[id]/traffic-class             DSCP -> traffic class
//	scheduler/mode                                strict | dwrr
//	queues/queue[id]/dwrr-weight
//	queues/queue[id]/ecn/{min-threshold, max-threshold, max-probability-percent}
const QoSNamespace = "urn:labctl:qos"

type qosXML struct {
	XMLName xml.Name `xml:"qos"`
	PFC     []struct {
		ID      int  `xml:"id"`
		Enabled bool `xml:"enabled"`
	} `xml:"pfc>priority"`
	Xoff     int64   `xml:"buffer>xoff-bytes"`
	Xon      int64   `xml:"buffer>xon-bytes"`
	Alpha    float64 `xml:"buffer>alpha"`
	Headroom int64   `xml:"buffer>headroom-bytes"`
	Pools    []struct {
		Name string `xml:"name"`
		Size int64  `xml:"size-bytes"`
	} `xml:"buffer>pools>pool"`
	DSCP []struct {
		ID int `xml:"id"`
		TC int `xml:"traffic-class"`
	} `xml:"classifier>dscp"`
	Scheduler string `xml:"scheduler>mode"`
	Queues    []struct {
		ID     int  `xml:"id"`
		Weight *int `xml:"dwrr-weight"`
		ECN    *struct {
			Kmin int64 `xml:"min-threshold"`
			Kmax int64 `xml:"max-threshold"`
			Pmax int   `xml:"max-probability-percent"`
		} `xml:"ecn"`
	} `xml:"queues>queue"`
}

// baseNamespace is NETCONF's own (RFC 6241), whose operation attribute
// deletes an entry in an edit-config.
const baseNamespace = "urn:ietf:params:xml:ns:netconf:base:1.0"

// del is the attribute that deletes the element it is on.
const del = ` nc:operation="delete"`

// RenderQoS is the edit-config payload (merge) that sets what q manages:
// the PFC vector and thresholds always, the other parts when q has them.
// The entries q removes are deleted (operation "delete", which the device
// refuses for an entry it does not have: send only what it holds, see
// switchqos.Removal.Within).
func RenderQoS(q switchqos.Config) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<qos xmlns="%s" xmlns:nc="%s"><pfc>`, QoSNamespace, baseNamespace)
	for p, on := range q.PFC {
		fmt.Fprintf(&b, "<priority><id>%d</id><enabled>%t</enabled></priority>", p, on)
	}
	fmt.Fprintf(&b, "</pfc><buffer><xoff-bytes>%d</xoff-bytes><xon-bytes>%d</xon-bytes><alpha>%s</alpha>",
		q.XoffBytes, q.XonBytes, switchqos.FormatAlpha(q.Alpha))
	if q.HeadroomBytes > 0 {
		fmt.Fprintf(&b, "<headroom-bytes>%d</headroom-bytes>", q.HeadroomBytes)
	}
	rm := q.Remove
	if len(q.Pools)+len(rm.Pools) > 0 {
		b.WriteString("<pools>")
		for _, name := range slices.Sorted(maps.Keys(q.Pools)) {
			fmt.Fprintf(&b, "<pool><name>%s</name><size-bytes>%d</size-bytes></pool>", escape(name), q.Pools[name])
		}
		for _, name := range rm.Pools {
			fmt.Fprintf(&b, "<pool%s><name>%s</name></pool>", del, escape(name))
		}
		b.WriteString("</pools>")
	}
	b.WriteString("</buffer>")
	if len(q.DSCP)+len(rm.DSCP) > 0 {
		b.WriteString("<classifier>")
		for _, d := range slices.Sorted(maps.Keys(q.DSCP)) {
			fmt.Fprintf(&b, "<dscp><id>%d</id><traffic-class>%d</traffic-class></dscp>", d, q.DSCP[d])
		}
		for _, d := range rm.DSCP {
			fmt.Fprintf(&b, "<dscp%s><id>%d</id></dscp>", del, d)
		}
		b.WriteString("</classifier>")
	}
	if q.Scheduler != "" {
		fmt.Fprintf(&b, "<scheduler><mode>%s</mode></scheduler>", escape(q.Scheduler))
	}
	queues := map[int]bool{}
	for id := range q.ECN {
		queues[id] = true
	}
	for id := range q.Weights {
		queues[id] = true
	}
	for _, id := range rm.ECN {
		queues[id] = true
	}
	b.WriteString("<queues>")
	for _, id := range slices.Sorted(maps.Keys(queues)) {
		fmt.Fprintf(&b, "<queue><id>%d</id>", id)
		if w, ok := q.Weights[id]; ok {
			fmt.Fprintf(&b, "<dwrr-weight>%d</dwrr-weight>", w)
		}
		if e, ok := q.ECN[id]; ok {
			fmt.Fprintf(&b, "<ecn><min-threshold>%d</min-threshold><max-threshold>%d</max-threshold><max-probability-percent>%d</max-probability-percent></ecn>",
				e.KminBytes, e.KmaxBytes, e.PmaxPercent)
		} else if slices.Contains(rm.ECN, id) {
			fmt.Fprintf(&b, "<ecn%s/>", del)
		}
		b.WriteString("</queue>")
	}
	b.WriteString("</queues></qos>")
	return b.String()
}

// ParseQoS reads the model out of a get-config answer (other content is
// ignored); a device with no QoS config yields the zero Config.
func ParseQoS(config string) (switchqos.Config, error) {
	var q switchqos.Config
	i := strings.Index(config, "<qos")
	if i < 0 {
		return q, nil
	}
	var x qosXML
	if err := xml.NewDecoder(strings.NewReader(config[i:])).Decode(&x); err != nil {
		return q, fmt.Errorf("qos config: %w", err)
	}
	for _, p := range x.PFC {
		if p.ID < 0 || p.ID > 7 {
			return q, fmt.Errorf("qos config: pfc priority %d is not 0..7", p.ID)
		}
		q.PFC[p.ID] = p.Enabled
	}
	q.XoffBytes, q.XonBytes, q.Alpha, q.HeadroomBytes, q.Scheduler = x.Xoff, x.Xon, x.Alpha, x.Headroom, x.Scheduler
	for _, p := range x.Pools {
		if q.Pools == nil {
			q.Pools = map[string]int64{}
		}
		q.Pools[p.Name] = p.Size
	}
	for _, d := range x.DSCP {
		if q.DSCP == nil {
			q.DSCP = map[int]int{}
		}
		q.DSCP[d.ID] = d.TC
	}
	for _, e := range x.Queues {
		if e.Weight != nil {
			if q.Weights == nil {
				q.Weights = map[int]int{}
			}
			q.Weights[e.ID] = *e.Weight
		}
		if e.ECN != nil {
			if q.ECN == nil {
				q.ECN = map[int]switchqos.ECN{}
			}
			q.ECN[e.ID] = switchqos.ECN{KminBytes: e.ECN.Kmin, KmaxBytes: e.ECN.Kmax, PmaxPercent: e.ECN.Pmax}
		}
	}
	return q, nil
}

func escape(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
