package regress

import (
	_ "embed"
	"fmt"
	"os"
	"path"

	"github.com/labctl/labctl/internal/yamlpos"
	"github.com/labctl/labctl/reports"
)

// Thresholds is a thresholds file: how much worse each metric may get.
//
//	noise_sigma: 2            # allowance: 2 standard errors of the difference
//	rules:
//	  - {metric: fct.mean, relative: 0.10}            # 10 % worse fails
//	  - {metric: fct.p99, bucket: "<100KB", relative: 0.15}
//	  - {metric: goodput_gbps, absolute: 2}           # higher is better: 2 Gb/s lower fails
//	  - {metric: drops, absolute: 0}                  # any new drop fails
//
// A metric is checked only if a rule names it. Metric and bucket are
// path.Match patterns ("fct.*", "*"); the first matching rule wins. A rule
// without bucket matches only the all-flows value (bucket "").
type Thresholds struct {
	// NoiseSigma scales the noise allowance (default 2). The allowance is
	// NoiseSigma times the standard error of the difference of the two
	// means, from the spread of each run's repetitions; without
	// repetitions it is 0.
	NoiseSigma *float64 `yaml:"noise_sigma"`
	Rules      []Rule   `yaml:"rules"`
	File       string   `yaml:"-"`
}

// Rule is one metric's threshold. A regression is a change for the worse
// larger than max(Relative x |baseline|, Absolute) plus the noise
// allowance; leaving both out means any change for the worse beyond noise.
type Rule struct {
	Metric   string   `yaml:"metric"`
	Bucket   string   `yaml:"bucket,omitempty"`
	Relative *float64 `yaml:"relative,omitempty"` // fraction of the baseline, e.g. 0.1
	Absolute *float64 `yaml:"absolute,omitempty"` // in the metric's unit
	// Better is "lower" or "higher"; default from the metric's name
	// (DefaultBetter).
	Better string `yaml:"better,omitempty"`
}

// DefaultNoiseSigma is the noise allowance in standard errors when the
// file does not set one (the one comparison sentences use too).
const DefaultNoiseSigma = reports.DefaultNoiseSigma

// LoadThresholds reads and checks a thresholds file; every problem is
// reported as file:line: field: message.
func LoadThresholds(file string) (*Thresholds, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("thresholds: %w", err)
	}
	return ParseThresholds(data, file)
}

// ParseThresholds decodes and checks a thresholds document.
func ParseThresholds(data []byte, file string) (*Thresholds, error) {
	var t Thresholds
	ix, err := yamlpos.Decode(data, file, &t)
	if err != nil {
		return nil, err
	}
	t.File = file
	var ps yamlpos.Problems
	if t.NoiseSigma != nil && *t.NoiseSigma < 0 {
		ix.Add(&ps, "noise_sigma", "must be >= 0")
	}
	if len(t.Rules) == 0 {
		ix.Add(&ps, "rules", "at least one rule is needed (a metric to check)")
	}
	for i, r := range t.Rules {
		p := fmt.Sprintf("rules[%d]", i)
		if r.Metric == "" {
			ix.Add(&ps, p+".metric", "required (e.g. fct.mean, fct.p99, slowdown.p99, goodput_gbps)")
		} else if _, err := path.Match(r.Metric, ""); err != nil {
			ix.Add(&ps, p+".metric", "bad pattern %q: %v", r.Metric, err)
		}
		if _, err := path.Match(r.Bucket, ""); err != nil {
			ix.Add(&ps, p+".bucket", "bad pattern %q: %v", r.Bucket, err)
		}
		if r.Relative != nil && *r.Relative < 0 {
			ix.Add(&ps, p+".relative", "must be >= 0 (a fraction of the baseline, e.g. 0.1)")
		}
		if r.Absolute != nil && *r.Absolute < 0 {
			ix.Add(&ps, p+".absolute", "must be >= 0 (in the metric's unit)")
		}
		switch r.Better {
		case "", "lower", "higher":
		default:
			ix.Add(&ps, p+".better", "must be lower or higher, not %q", r.Better)
		}
	}
	if err := ps.Err(); err != nil {
		return nil, err
	}
	return &t, nil
}

// rule is the first rule matching a metric and bucket.
func (t *Thresholds) rule(metric, bucket string) (Rule, bool) {
	for _, r := range t.Rules {
		if ok, _ := path.Match(r.Metric, metric); !ok {
			continue
		}
		if ok, _ := path.Match(r.Bucket, bucket); !ok {
			continue
		}
		return r, true
	}
	return Rule{}, false
}

func (t *Thresholds) sigma() float64 {
	if t.NoiseSigma == nil {
		return DefaultNoiseSigma
	}
	return *t.NoiseSigma
}

//go:embed default-thresholds.yaml
var defaultThresholds []byte

// DefaultThresholds are the rules used when no thresholds file is given
// (default-thresholds.yaml: FCT mean/p99 per bucket, slowdown, goodput,
// all-reduce bandwidth and failed flows).
func DefaultThresholds() *Thresholds {
	t, err := ParseThresholds(defaultThresholds, "builtin:default-thresholds.yaml")
	if err != nil {
		panic(err) // the embedded file is checked by a test
	}
	return t
}
