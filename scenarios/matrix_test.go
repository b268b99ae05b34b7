package scenarios

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/reports"
)

const matrixDoc = `name: m
lab: leafspine:2x2:4@100
repetitions: 2
emulation:
  engine: packet
traffic:
  - name: w
    pattern: workload
    cdf: websearch
    load: 0.5
    duration: 5ms
matrix:
  - path: emulation.lb
    values: [ecmp, drill]
  - path: traffic[0].load
    values: [0.3, 0.7]
  - path: traffic[0].cdf
    values: [websearch, alistorage2019]
  - path: emulation.lb_params.d
    name: drill_d
    values: ["2"]
`

func TestMatrixVariantsInOrder(t *testing.T) {
	s, err := Parse([]byte(matrixDoc), "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	vs, err := s.Variants()
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, v := range vs {
		labels = append(labels, v.Label)
	}
	want := []string{
		"scheme=ecmp/load=0.3/workload=websearch/drill_d=2", "scheme=ecmp/load=0.3/workload=alistorage2019/drill_d=2",
		"scheme=ecmp/load=0.7/workload=websearch/drill_d=2", "scheme=ecmp/load=0.7/workload=alistorage2019/drill_d=2",
		"scheme=drill/load=0.3/workload=websearch/drill_d=2", "scheme=drill/load=0.3/workload=alistorage2019/drill_d=2",
		"scheme=drill/load=0.7/workload=websearch/drill_d=2", "scheme=drill/load=0.7/workload=alistorage2019/drill_d=2",
	}
	if !reflect.DeepEqual(labels, want) {
		t.Fatalf("cross product order:\n got %q\nwant %q", labels, want)
	}
	v := vs[5]
	if v.Scenario.Emulation.LB != "drill" || v.Scenario.Traffic[0].Load != 0.3 || v.Scenario.Traffic[0].CDF != "alistorage2019" ||
		v.Scenario.Emulation.LBParams["d"] != "2" {
		t.Errorf("variant 5 has %+v %+v", v.Scenario.Emulation, v.Scenario.Traffic[0])
	}
	if s.Traffic[0].Load != 0.5 || s.Emulation.LB != "" {
		t.Error("variants must not change the scenario they come from")
	}
	if l, ok := v.Params[reports.ParamLoad].(float64); !ok || l != 0.3 {
		t.Errorf("load param %#v, want the float64 0.3", v.Params[reports.ParamLoad])
	}
}

func TestMatrixPlanNamesParamsSeeds(t *testing.T) {
	s, _ := Parse([]byte(matrixDoc), "m.yaml")
	lab, _ := inventory.Generate("leafspine:2x2:4@100")
	plan, err := MakePlan(s, lab)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Points) != 8*2 {
		t.Fatalf("%d points, want 8 variants x 2 repetitions", len(plan.Points))
	}
	// Each variant's repetitions are consecutive.
	if got := plan.Points[1].Name; got != "w/scheme=ecmp/load=0.3/workload=websearch/drill_d=2/rep1" {
		t.Errorf("point 1 is %q", got)
	}
	seeds := map[string]map[int64]bool{} // variant -> seeds
	bySeed := map[int64][]string{}
	for _, p := range plan.Points {
		for _, k := range []string{reports.ParamScheme, reports.ParamLoad, reports.ParamWorkload, "drill_d", "seed", "repetition"} {
			if _, ok := p.Params[k]; !ok {
				t.Errorf("%s: params %v lack %s", p.Name, p.Params, k)
			}
		}
		v := strings.TrimSuffix(p.Name, fmt.Sprintf("/rep%d", p.Repetition))
		if seeds[v] == nil {
			seeds[v] = map[int64]bool{}
		}
		seed := p.Params["seed"].(int64)
		seeds[v][seed] = true
		bySeed[seed] = append(bySeed[seed], p.Name)
		if p.RequestedLoad != p.Params[reports.ParamLoad] || p.WindowNs != 5e6 {
			t.Errorf("%s: requested %v, window %d", p.Name, p.RequestedLoad, p.WindowNs)
		}
	}
	for v, ss := range seeds {
		if len(ss) != 2 {
			t.Errorf("%s: repetitions share a seed: %v", v, ss)
		}
	}
	// The same repetition of every variant has the same seed: schemes
	// compare on the same draws.
	if len(bySeed) != 2 {
		t.Errorf("want one seed per repetition across variants, got %d", len(bySeed))
	}
	// A pinned seed is kept in every repetition.
	pinned := strings.Replace(matrixDoc, "duration: 5ms", "duration: 5ms\n    seed: 42", 1)
	s, _ = Parse([]byte(pinned), "m.yaml")
	plan, _ = MakePlan(s, lab)
	for _, p := range plan.Points {
		if p.Params["seed"] != int64(42) {
			t.Fatalf("%s: seed %v, want the pinned 42", p.Name, p.Params["seed"])
		}
	}
}

func TestMatrixErrorsPointAtTheMatrix(t *testing.T) {
	for _, tc := range []struct {
		name, matrix string
		want         []string
	}{
		{"unknown field", "  - path: emulation.lbb\n    values: [ecmp]\n",
			[]string{`m.yaml:13: matrix[0].path: no field "lbb" at emulation (it has engine, lb, lb_params, transport, host_lb, host_lb_params, rnic, nack_interval_us, cnp_on_nack, pfc_pause_quanta, pfc_refresh_us, reorder_queues)`}},
		{"index past the traffic", "  - path: traffic[3].load\n    values: [0.5]\n",
			[]string{"m.yaml:13: matrix[0].path: index [3] is past the 1 entries"}},
		{"not sweepable", "  - path: name\n    values: [a]\n", []string{"m.yaml:13: matrix[0].path: name cannot be swept"}},
		{"bad value type", "  - path: traffic[0].load\n    values: [0.3, lots]\n",
			[]string{"m.yaml:14: matrix[0].values[1]: traffic[0].load: cannot unmarshal !!str `lots` into float64"}},
		{"value invalid for the schema", "  - path: traffic[0].load\n    values:\n      - 0.3\n      - 1.5\n",
			[]string{"m.yaml:16: matrix[0].values[1]: traffic[0].load = 1.5: must be in (0, 1]"}},
		{"unknown key in a struct value", "  - path: emulation\n    values: [{engine: packet, lbb: x}]\n",
			[]string{"m.yaml:14: matrix[0].values[0]: emulation: line 14: field lbb not found"}},
		{"combination", "  - path: emulation.engine\n    values: [packet, flow]\n  - path: emulation.lb\n    values: [ecmp]\n",
			[]string{"m.yaml:2: emulation: lb, transport and the packet engine's knobs need the packet engine (engine: packet, the default) (in variant engine=flow/scheme=ecmp)"}},
		{"duplicate names", "  - path: traffic[0].load\n    values: [0.3]\n  - path: emulation.lb\n    name: load\n    values: [ecmp]\n",
			[]string{`m.yaml:16: matrix[1].name: two sweeps are named "load"`}},
		{"no values", "  - path: lab\n", []string{"m.yaml:13: matrix[0].values: a sweep needs at least one value"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := "name: m\nemulation:\n  engine: packet\ntraffic:\n  - name: w\n    pattern: workload\n    cdf: websearch\n    load: 0.5\n    duration: 5ms\n\n\nmatrix:\n" + tc.matrix
			_, err := Parse([]byte(doc), "m.yaml")
			if err == nil {
				t.Fatal("want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\n lacks %q", err, w)
				}
			}
		})
	}
}

// TestPlainScenarioHasOneVariant: no matrix, no label, names as before.
func TestPlainScenarioHasOneVariant(t *testing.T) {
	s, err := Load("incast")
	if err != nil {
		t.Fatal(err)
	}
	vs, err := s.Variants()
	if err != nil || len(vs) != 1 || vs[0].Label != "" || vs[0].Scenario != s {
		t.Fatalf("%v %+v", err, vs)
	}
	lab, _ := inventory.Generate(DefaultLab)
	plan, err := MakePlan(s, lab)
	if err != nil || len(plan.Points) != 1 || plan.Points[0].Name != "incast-16to1" || len(plan.Points[0].Params) != 0 {
		t.Fatalf("%v %+v", err, plan.Points)
	}
}

// fourEntries has two incasts and two workloads; the matrix sweeps the
// scheme (every entry) and the load of traffic[2] (that entry only).
const fourEntries = `name: four
lab: leafspine:2x2:4@100
emulation:
  engine: packet
traffic:
  - {name: small, pattern: incast, senders: 3, receiver: h1, bytes: 64KiB}
  - {name: big, pattern: incast, senders: 3, receiver: h1, bytes: 4MiB}
  - {name: ws, pattern: workload, cdf: websearch, load: 0.5, duration: 5ms}
  - {name: ws2, pattern: workload, cdf: websearch, load: 0.6, duration: 5ms}
matrix:
  - path: emulation.lb
    values: [ecmp, drill]
  - path: traffic[2].load
    values: [0.3, 0.5]
`

// TestMatrixTrafficSweepAppliesToItsEntry: a traffic[i] sweep changes only
// entry i's points (the others run once per combination of the sweeps that
// apply to them, with neither the value nor its name), and every point of a
// scenario with several entries names its entry in params, so that the
// report's groups keep the entries apart.
func TestMatrixTrafficSweepAppliesToItsEntry(t *testing.T) {
	s, err := Parse([]byte(fourEntries), "four.yaml")
	if err != nil {
		t.Fatal(err)
	}
	lab, _ := inventory.Generate("leafspine:2x2:4@100")
	plan, err := MakePlan(s, lab)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range plan.Points {
		names = append(names, p.Name)
	}
	want := []string{
		"small/scheme=ecmp", "big/scheme=ecmp", "ws/scheme=ecmp/load=0.3", "ws2/scheme=ecmp", "ws/scheme=ecmp/load=0.5",
		"small/scheme=drill", "big/scheme=drill", "ws/scheme=drill/load=0.3", "ws2/scheme=drill", "ws/scheme=drill/load=0.5",
	}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("points:\n got %q\nwant %q", names, want)
	}
	keys := map[string]string{}
	for _, p := range plan.Points {
		entry := s.Traffic[p.Traffic].Name
		if p.Params["traffic"] != entry {
			t.Errorf("%s: params %v, want traffic=%s", p.Name, p.Params, entry)
		}
		load, hasLoad := p.Params[reports.ParamLoad]
		switch entry {
		case "small", "big":
			if hasLoad {
				t.Errorf("%s: an incast has load %v from another entry's sweep", p.Name, load)
			}
		case "ws2":
			if load != 0.6 || p.RequestedLoad != 0.6 {
				t.Errorf("%s: load %v, requested %v; want its own 0.6", p.Name, load, p.RequestedLoad)
			}
		case "ws":
			if load != p.RequestedLoad || (load != 0.3 && load != 0.5) {
				t.Errorf("%s: load %v, requested %v", p.Name, load, p.RequestedLoad)
			}
		}
		ps := reports.PointSummary{Name: p.Name, Params: p.Params}
		ps.Scheme, _ = p.Params[reports.ParamScheme].(string)
		key, _ := reports.GroupKeys(ps)
		if other, ok := keys[key]; ok {
			t.Errorf("points %s and %s fall into one report group %q", other, p.Name, key)
		}
		keys[key] = p.Name
	}
}

// TestSweepLabelsNameSectionValues: a sweep of a whole section names its
// values by its labels in point names and params; labels must match the
// values one for one and be safe names.
func TestSweepLabelsNameSectionValues(t *testing.T) {
	t.Parallel()
	doc := `name: l
traffic: [{name: w, pattern: workload, cdf: websearch, load: 0.5, duration: 1ms}]
matrix:
  - path: emulation
    name: scheme
    values: [{lb: ecmp}, {lb: letflow, lb_params: {timeout_us: "10"}}]
    labels: [ecmp, letflow-10us]
`
	s, err := Parse([]byte(doc), "l.yaml")
	if err != nil {
		t.Fatal(err)
	}
	vs, err := s.Variants()
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 2 || vs[1].Label != "scheme=letflow-10us" || vs[1].Params["scheme"] != "letflow-10us" {
		t.Fatalf("variants: %+v", vs)
	}
	if em := vs[1].Scenario.Emulation; em.LB != "letflow" || em.LBParams["timeout_us"] != "10" {
		t.Errorf("the value itself is not set: %+v", em)
	}
	for _, tc := range []struct{ labels, want string }{
		{"[ecmp]", "l.yaml:7: matrix[0].labels: 1 labels for 2 values"},
		{"[ecmp, ../x]", `l.yaml:7: matrix[0].labels[1]: "../x"`},
	} {
		bad := strings.Replace(doc, "[ecmp, letflow-10us]", tc.labels, 1)
		s, err := Parse([]byte(bad), "l.yaml")
		if err == nil {
			_, err = s.Variants()
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("labels %s: err = %v, want %q", tc.labels, err, tc.want)
		}
	}
}
