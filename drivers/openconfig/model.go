package openconfig

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/labctl/labctl/drivers/switchqos"
)

// Deviation is what a NOS lacks of labctl's model over OpenConfig.
type Deviation struct {
	// PFC: no PFC leaves (lossless priorities are set by other means).
	PFC bool
	// XON: no resume threshold (openconfig-qos has none).
	XON bool
	// Pools: no shared buffer pool sizes (openconfig-qos has none).
	Pools bool
	// Buffer: no buffer-allocation-profiles (XOFF, alpha, headroom).
	Buffer bool
}

// Deviations is the table by a switch's os: what each NOS whose
// OpenConfig QoS labctl knows lacks. Enterprise SONiC augments
// openconfig-qos with PFC (openconfig-qos-ext); EOS's PFC paths are not
// known to labctl (hardware-surfaces 4.4), so its PFC is left alone, and
// with it the PFC thresholds (a queue's buffer limit without PFC is a
// drop threshold, not XOFF); a generic "openconfig" target is held to
// openconfig/public alone likewise.
func Deviations() map[string]Deviation {
	return map[string]Deviation{
		"enterprise-sonic": {XON: true, Pools: true},
		"eos":              {PFC: true, XON: true, Pools: true, Buffer: true},
		"openconfig":       {PFC: true, XON: true, Pools: true, Buffer: true},
	}
}

// OSNames lists the os: values the driver serves.
func OSNames() []string {
	var out []string
	for k := range Deviations() {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// The objects labctl owns on the switch.
const (
	Classifier      = "LABCTL_DSCP"
	SchedulerPolicy = "LABCTL"
	BufferProfile   = "LABCTL"
)

func queueObject(q int) string { return fmt.Sprintf("LABCTL_Q%d", q) }
func group(tc int) string      { return fmt.Sprintf("tc%d", tc) }

// Leaves is configuration as leaf paths (/qos/queues/queue[name=3]/...,
// keys sorted) and their values as text.
type Leaves map[string]string

// Render is the leaves that make ports hold q on a NOS with deviation
// dev (what dev lacks is left out).
func Render(ports []string, q switchqos.Config, dev Deviation) Leaves {
	l := Leaves{}
	for n := 0; n < 8; n++ {
		l[fmt.Sprintf("/qos/queues/queue[name=%d]/config/name", n)] = strconv.Itoa(n)
		l[fmt.Sprintf("/qos/forwarding-groups/forwarding-group[name=%s]/config/output-queue", group(n))] = strconv.Itoa(n)
	}
	if len(q.DSCP) > 0 {
		c := "/qos/classifiers/classifier[name=" + Classifier + "]"
		l[c+"/config/type"] = "IPV4"
		for d, tc := range q.DSCP {
			term := fmt.Sprintf("%s/terms/term[id=dscp-%d]", c, d)
			l[term+"/conditions/ipv4/config/dscp"] = strconv.Itoa(d)
			l[term+"/actions/config/target-group"] = group(tc)
		}
	}
	if q.Scheduler != "" {
		s := "/qos/scheduler-policies/scheduler-policy[name=" + SchedulerPolicy + "]/schedulers/scheduler[sequence=0]"
		if q.Scheduler == switchqos.Strict {
			l[s+"/config/priority"] = "STRICT"
		}
		for n := 0; n < 8; n++ {
			in := fmt.Sprintf("%s/inputs/input[id=q%d]/config", s, n)
			l[in+"/queue"] = strconv.Itoa(n)
			if w, ok := q.Weights[n]; ok && q.Scheduler == switchqos.DWRR {
				l[in+"/weight"] = strconv.Itoa(w)
			}
		}
	}
	for n, e := range q.ECN {
		p := "/qos/queue-management-profiles/queue-management-profile[name=" + queueObject(n) + "]"
		l[p+"/config/name"] = queueObject(n)
		w := p + "/wred/uniform/config"
		l[w+"/min-threshold"] = strconv.FormatInt(e.KminBytes, 10)
		l[w+"/max-threshold"] = strconv.FormatInt(e.KmaxBytes, 10)
		l[w+"/max-drop-probability-percent"] = strconv.Itoa(e.PmaxPercent)
		l[w+"/enable-ecn"] = "true"
	}
	var lossless []int
	for p, on := range q.PFC {
		if on {
			lossless = append(lossless, p)
		}
	}
	if !dev.Buffer {
		for _, p := range lossless {
			b := fmt.Sprintf("/qos/buffer-allocation-profiles/buffer-allocation-profile[name=%s]/queues/queue[name=%d]/config", BufferProfile, p)
			if q.Alpha > 0 {
				l[b+"/dynamic-limit-scaling-factor"] = strconv.Itoa(int(math.Round(math.Log2(q.Alpha))))
			} else {
				l[b+"/static-shared-buffer-limit"] = strconv.FormatInt(q.XoffBytes, 10)
			}
			if q.HeadroomBytes > 0 {
				l[b+"/dedicated-buffer"] = strconv.FormatInt(q.HeadroomBytes, 10)
			}
		}
	}
	for _, port := range ports {
		i := "/qos/interfaces/interface[interface-id=" + port + "]"
		if len(q.DSCP) > 0 {
			l[i+"/input/classifiers/classifier[type=IPV4]/config/name"] = Classifier
		}
		if q.Scheduler != "" {
			l[i+"/output/scheduler-policy/config/name"] = SchedulerPolicy
		}
		if !dev.Buffer && len(lossless) > 0 {
			l[i+"/output/config/buffer-allocation-profile"] = BufferProfile
		}
		for n := range q.ECN {
			l[fmt.Sprintf("%s/output/queues/queue[name=%d]/config/queue-management-profile", i, n)] = queueObject(n)
		}
		if !dev.PFC {
			for p, on := range q.PFC {
				l[fmt.Sprintf("%s/pfc/pfc-priorities/pfc-priority[dot1p=%d]/config/enable", i, p)] = strconv.FormatBool(on)
			}
		}
	}
	return l
}

// Managed lists the subtrees a Set of Render's leaves replaces: labctl's
// own objects and the per-port attachments, so that what a profile no
// longer holds (an ECN queue, a DSCP code point) goes with them.
func Managed(ports []string, dev Deviation) []string {
	out := []string{"/qos/classifiers/classifier[name=" + Classifier + "]",
		"/qos/scheduler-policies/scheduler-policy[name=" + SchedulerPolicy + "]",
		"/qos/buffer-allocation-profiles/buffer-allocation-profile[name=" + BufferProfile + "]"}
	for n := 0; n < 8; n++ {
		out = append(out, "/qos/queue-management-profiles/queue-management-profile[name="+queueObject(n)+"]")
	}
	for _, p := range ports {
		i := "/qos/interfaces/interface[interface-id=" + p + "]"
		out = append(out, i+"/input", i+"/output")
		if !dev.PFC {
			out = append(out, i+"/pfc")
		}
	}
	return out
}

// Parse is port's QoS in labctl's model from the leaves of a Get.
func Parse(l Leaves, port string) (switchqos.Config, error) {
	var q switchqos.Config
	i := "/qos/interfaces/interface[interface-id=" + port + "]"
	num := func(path string) (int64, bool, error) {
		v, ok := l[path]
		if !ok {
			return 0, false, nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, false, fmt.Errorf("%s: %q is not an integer", path, v)
		}
		return n, true, nil
	}
	for p := 0; p < 8; p++ {
		q.PFC[p] = l[fmt.Sprintf("%s/pfc/pfc-priorities/pfc-priority[dot1p=%d]/config/enable", i, p)] == "true"
	}
	if c := l[i+"/input/classifiers/classifier[type=IPV4]/config/name"]; c != "" {
		q.DSCP = map[int]int{}
		base := "/qos/classifiers/classifier[name=" + c + "]/terms/term[id="
		for path, v := range l {
			rest, ok := strings.CutPrefix(path, base)
			if !ok || !strings.HasSuffix(rest, "]/conditions/ipv4/config/dscp") {
				continue
			}
			id := strings.TrimSuffix(rest, "]/conditions/ipv4/config/dscp")
			d, err := strconv.Atoi(v)
			tg := l[base+id+"]/actions/config/target-group"]
			tc, err2 := strconv.Atoi(l["/qos/forwarding-groups/forwarding-group[name="+tg+"]/config/output-queue"])
			if err != nil || err2 != nil || d < 0 || d > 63 || tc < 0 || tc > 7 {
				return q, fmt.Errorf("classifier %s term %s: dscp %q to group %q is not a DSCP to a queue 0..7", c, id, v, tg)
			}
			q.DSCP[d] = tc
		}
	}
	if sp := l[i+"/output/scheduler-policy/config/name"]; sp != "" {
		s := "/qos/scheduler-policies/scheduler-policy[name=" + sp + "]/schedulers/scheduler[sequence=0]"
		q.Scheduler = switchqos.DWRR
		if l[s+"/config/priority"] == "STRICT" {
			q.Scheduler = switchqos.Strict
		}
		for n := 0; n < 8; n++ {
			w, ok, err := num(fmt.Sprintf("%s/inputs/input[id=q%d]/config/weight", s, n))
			if err != nil {
				return q, err
			}
			if ok && q.Scheduler == switchqos.DWRR {
				if q.Weights == nil {
					q.Weights = map[int]int{}
				}
				q.Weights[n] = int(w)
			}
		}
	}
	for n := 0; n < 8; n++ {
		prof := l[fmt.Sprintf("%s/output/queues/queue[name=%d]/config/queue-management-profile", i, n)]
		if prof == "" {
			continue
		}
		w := "/qos/queue-management-profiles/queue-management-profile[name=" + prof + "]/wred/uniform/config"
		if l[w+"/enable-ecn"] != "true" {
			continue
		}
		kmin, _, e1 := num(w + "/min-threshold")
		kmax, _, e2 := num(w + "/max-threshold")
		pmax, _, e3 := num(w + "/max-drop-probability-percent")
		for _, err := range []error{e1, e2, e3} {
			if err != nil {
				return q, err
			}
		}
		if q.ECN == nil {
			q.ECN = map[int]switchqos.ECN{}
		}
		q.ECN[n] = switchqos.ECN{KminBytes: kmin, KmaxBytes: kmax, PmaxPercent: int(pmax)}
	}
	if bp := l[i+"/output/config/buffer-allocation-profile"]; bp != "" {
		for p := 0; p < 8; p++ {
			if !q.PFC[p] {
				continue
			}
			b := fmt.Sprintf("/qos/buffer-allocation-profiles/buffer-allocation-profile[name=%s]/queues/queue[name=%d]/config", bp, p)
			static, hasStatic, err1 := num(b + "/static-shared-buffer-limit")
			dyn, hasDyn, err2 := num(b + "/dynamic-limit-scaling-factor")
			head, _, err3 := num(b + "/dedicated-buffer")
			if err := firstErr(err1, err2, err3); err != nil {
				return q, err
			}
			if !hasStatic && !hasDyn {
				continue
			}
			q.XoffBytes, q.HeadroomBytes = static, head
			if hasDyn {
				if dyn < -8 || dyn > 8 {
					return q, fmt.Errorf("%s/dynamic-limit-scaling-factor %d is out of -8..8", b, dyn)
				}
				q.Alpha, q.XoffBytes = math.Ldexp(1, int(dyn)), 0
			}
			break
		}
	}
	return q, nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// Want is want as a NOS with dev can hold it, given what it has: the
// parts it lacks are taken from have, so that they neither differ nor
// get sent.
func Want(want, have switchqos.Config, dev Deviation) switchqos.Config {
	if dev.PFC {
		want.PFC = have.PFC
	}
	if dev.XON {
		want.XonBytes = have.XonBytes
	}
	if dev.Pools {
		want.Pools, want.Remove.Pools = nil, nil
	}
	if dev.Buffer {
		want.XoffBytes, want.Alpha, want.HeadroomBytes = have.XoffBytes, have.Alpha, have.HeadroomBytes
	}
	want.Remove.Pools = nil // no OpenConfig pools to remove
	return want
}
