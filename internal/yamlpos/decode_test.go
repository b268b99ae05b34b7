package yamlpos

import (
	"strings"
	"testing"
	"time"
)

type inner struct {
	Kmin int64 `yaml:"kmin_bytes"`
	Pmax int   `yaml:"pmax_percent"`
}

type testDoc struct {
	A     int              `yaml:"a"`
	M     map[int]string   `yaml:"m"`
	Q     map[int]inner    `yaml:"q"`
	L     []inner          `yaml:"l"`
	On    bool             `yaml:"on"`
	Every time.Duration    `yaml:"every"`
	Names []string         `yaml:"names"`
	Deep  map[string][]int `yaml:"deep"`
}

func TestDecodeStrictWithIndex(t *testing.T) {
	var v testDoc
	ix, err := Decode([]byte("a: 1\nm:\n  3: x\n"), "f.yaml", &v)
	if err != nil || v.A != 1 || ix.Line("m.3") != 3 {
		t.Fatalf("%v %+v line %d", err, v, ix.Line("m.3"))
	}
}

// Whatever yaml.v3 refuses comes back as file:line: field: message, one
// problem per mistake, in line order.
func TestDecodeErrorsNameFileLineField(t *testing.T) {
	for _, tc := range []struct{ testDoc, want string }{
		{"a: 1\nb: 2\n", "f.yaml:2: b: unknown field (known here: a, m, q, l, on, every, names, deep)"},
		{"q:\n  3: {kmin_bytes: 1, kmax: 2}\n", "f.yaml:2: q.3.kmax: unknown field (known here: kmin_bytes, pmax_percent)"},
		{"l:\n  - {kmin_bytes: 1}\n  - {pmax: 2}\n", "f.yaml:3: l[1].pmax: unknown field (known here: kmin_bytes, pmax_percent)"},
		{"a: lots\n", `f.yaml:1: a: want an integer, got "lots"`},
		{"a: [1]\n", "f.yaml:1: a: want an integer, got a list"},
		{"q:\n  x: {kmin_bytes: 1}\n", `f.yaml:2: q.x: want an integer, got "x"`},
		{"q: {3: {kmin_bytes: 1, pmax_percent: x}}\n", `f.yaml:1: q.3.pmax_percent: want an integer, got "x"`},
		{"on: maybe\n", `f.yaml:1: on: want true or false, got "maybe"`},
		{"every: soon\n", `f.yaml:1: every: want a duration (e.g. 500ms, 2s), got "soon"`},
		{"names: {a: 1}\n", "f.yaml:1: names: want a list, got a mapping"},
		{"deep:\n  x: [1, two]\n", `f.yaml:2: deep.x[1]: want an integer, got "two"`},
		{"a: averyveryverylongvalue\n", `f.yaml:1: a: want an integer, got "averyve..."`},
		{"a: 1\na: 2\n", "f.yaml:2: a: given twice (first at line 1)"},
		{"a: 1\nm: x\nb: 3\n", "f.yaml:2: m: want a mapping, got \"x\"\nf.yaml:3: b: unknown field"},
		{"a: [\n", "f.yaml:1: did not find expected node content"},
		{"", "f.yaml: the file is empty"},
	} {
		var v testDoc
		_, err := Decode([]byte(tc.testDoc), "f.yaml", &v)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q:\n got %v\nwant %s", tc.testDoc, err, tc.want)
		}
		if _, ok := err.(Problems); !ok {
			t.Errorf("%q: %T is not Problems", tc.testDoc, err)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add("a: 1\nm:\n  3: x\nq: {3: {kmin_bytes: 1}}\n")
	f.Add("a: [1]\nb: 2\nl:\n  - {pmax: x}\n")
	f.Fuzz(func(t *testing.T, s string) {
		var v testDoc
		_, err := Decode([]byte(s), "f.yaml", &v)
		if p, ok := err.(Problems); ok {
			for _, pr := range p {
				if pr.File != "f.yaml" || pr.Msg == "" {
					t.Fatalf("problem without file or message: %+v", pr)
				}
			}
		}
	})
}
