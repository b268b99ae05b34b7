package netconf

import (
	"encoding/xml"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// QoSNamespace is labctl's QoS data model over NETCONF. OpenConfig has no
// PFC model (hardware-surfaces reference, section 4.2) and vendors differ
// (Junos class-of-service), so emulated switches serve this one; a real
// device needs its own mapping of the same QoS values.
const QoSNamespace = "urn:labctl:qos"

// QoS is a switch's QoS settings as this model carries them.
type QoS struct {
	PFC       [8]bool
	XoffBytes int64
	XonBytes  int64
	ECN       map[int]ECN // by queue
}

// ECN is a queue's RED/ECN marking.
type ECN struct {
	KminBytes, KmaxBytes int64
	PmaxPercent          int
}

type qosXML struct {
	XMLName xml.Name `xml:"qos"`
	PFC     []struct {
		ID      int  `xml:"id"`
		Enabled bool `xml:"enabled"`
	} `xml:"pfc>priority"`
	Xoff   int64 `xml:"buffer>xoff-bytes"`
	Xon    int64 `xml:"buffer>xon-bytes"`
	Queues []struct {
		ID   int   `xml:"id"`
		Kmin int64 `xml:"ecn>min-threshold"`
		Kmax int64 `xml:"ecn>max-threshold"`
		Pmax int   `xml:"ecn>max-probability-percent"`
	} `xml:"queues>queue"`
}

// RenderQoS is the edit-config payload that sets q (merge).
func RenderQoS(q QoS) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<qos xmlns="%s"><pfc>`, QoSNamespace)
	for p, on := range q.PFC {
		fmt.Fprintf(&b, "<priority><id>%d</id><enabled>%t</enabled></priority>", p, on)
	}
	fmt.Fprintf(&b, "</pfc><buffer><xoff-bytes>%d</xoff-bytes><xon-bytes>%d</xon-bytes></buffer><queues>", q.XoffBytes, q.XonBytes)
	for _, id := range sortedQueues(q.ECN) {
		e := q.ECN[id]
		fmt.Fprintf(&b, "<queue><id>%d</id><ecn><min-threshold>%d</min-threshold><max-threshold>%d</max-threshold><max-probability-percent>%d</max-probability-percent></ecn></queue>",
			id, e.KminBytes, e.KmaxBytes, e.PmaxPercent)
	}
	b.WriteString("</queues></qos>")
	return b.String()
}

// ParseQoS reads the model out of a get-config answer (other content is
// ignored); a device with no QoS config yields the zero QoS.
func ParseQoS(config string) (QoS, error) {
	q := QoS{ECN: map[int]ECN{}}
	i := strings.Index(config, "<qos")
	if i < 0 {
		return q, nil
	}
	var x qosXML
	if err := xml.NewDecoder(strings.NewReader(config[i:])).Decode(&x); err != nil {
		return q, fmt.Errorf("qos config: %w", err)
	}
	for _, p := range x.PFC {
		if p.ID >= 0 && p.ID < 8 {
			q.PFC[p.ID] = p.Enabled
		}
	}
	q.XoffBytes, q.XonBytes = x.Xoff, x.Xon
	for _, e := range x.Queues {
		q.ECN[e.ID] = ECN{KminBytes: e.Kmin, KmaxBytes: e.Kmax, PmaxPercent: e.Pmax}
	}
	return q, nil
}

// Setting is one difference between two QoS configurations.
type Setting struct{ Field, From, To string }

// DiffQoS lists the settings of want that have differs in have: the PFC
// vector, XOFF, XON, and each ECN value per queue separately.
func DiffQoS(have, want QoS) []Setting {
	var out []Setting
	add := func(field, from, to string) {
		if from != to {
			out = append(out, Setting{field, from, to})
		}
	}
	pfc := func(v [8]bool) string {
		s := make([]string, 8)
		for i, on := range v {
			s[i] = "0"
			if on {
				s[i] = "1"
			}
		}
		return strings.Join(s, ",")
	}
	add("pfc", pfc(have.PFC), pfc(want.PFC))
	add("xoff_bytes", strconv.FormatInt(have.XoffBytes, 10), strconv.FormatInt(want.XoffBytes, 10))
	add("xon_bytes", strconv.FormatInt(have.XonBytes, 10), strconv.FormatInt(want.XonBytes, 10))
	for _, id := range sortedQueues(want.ECN) {
		h, w := have.ECN[id], want.ECN[id]
		f := fmt.Sprintf("queue[%d].ecn.", id)
		add(f+"kmin_bytes", strconv.FormatInt(h.KminBytes, 10), strconv.FormatInt(w.KminBytes, 10))
		add(f+"kmax_bytes", strconv.FormatInt(h.KmaxBytes, 10), strconv.FormatInt(w.KmaxBytes, 10))
		add(f+"pmax_percent", strconv.Itoa(h.PmaxPercent), strconv.Itoa(w.PmaxPercent))
	}
	return out
}

func sortedQueues(m map[int]ECN) []int {
	ids := make([]int, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	return ids
}
