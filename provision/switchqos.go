package provision

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/labctl/labctl/drivers/netconf"
	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/inventory"
)

// QoSProfile is the intended switch QoS (the switch profile YAML).
type QoSProfile struct {
	PFCPriorities []int              `yaml:"pfc_priorities"`
	XoffBytes     int64              `yaml:"xoff_bytes"`
	XonBytes      int64              `yaml:"xon_bytes"`
	ECN           map[int]ECNProfile `yaml:"ecn"` // by queue
}

// ECNProfile is one queue's marking.
type ECNProfile struct {
	KminBytes   int64 `yaml:"kmin_bytes"`
	KmaxBytes   int64 `yaml:"kmax_bytes"`
	PmaxPercent int   `yaml:"pmax_percent"`
}

// LoadQoSProfile reads and checks a switch profile.
func LoadQoSProfile(path string) (*QoSProfile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var p QoSProfile
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, pr := range p.PFCPriorities {
		if pr < 0 || pr > 7 {
			return nil, fmt.Errorf("%s: pfc_priorities: %d is not a priority (0..7)", path, pr)
		}
	}
	if p.XonBytes > p.XoffBytes {
		return nil, fmt.Errorf("%s: xon_bytes %d above xoff_bytes %d", path, p.XonBytes, p.XoffBytes)
	}
	for q, e := range p.ECN {
		if q < 0 || q > 7 || e.KminBytes > e.KmaxBytes || e.PmaxPercent < 0 || e.PmaxPercent > 100 {
			return nil, fmt.Errorf("%s: ecn queue %d: want queue 0..7, kmin <= kmax, pmax 0..100", path, q)
		}
	}
	return &p, nil
}

// Want is the profile in the switches' model.
func (p *QoSProfile) Want() netconf.QoS {
	q := netconf.QoS{XoffBytes: p.XoffBytes, XonBytes: p.XonBytes, ECN: map[int]netconf.ECN{}}
	for _, pr := range p.PFCPriorities {
		q.PFC[pr] = true
	}
	for id, e := range p.ECN {
		q.ECN[id] = netconf.ECN{KminBytes: e.KminBytes, KmaxBytes: e.KmaxBytes, PmaxPercent: e.PmaxPercent}
	}
	return q
}

// SwitchChange is one QoS difference on one switch.
type SwitchChange struct {
	Switch string `json:"switch"`
	netconf.Setting
}

// SwitchResult is what happened on one switch during an apply.
type SwitchResult struct {
	Switch  string `json:"switch"`
	Outcome string `json:"outcome"` // committed | rolled-back | failed | unchanged
	Error   string `json:"error,omitempty"`
}

type session struct {
	name string
	s    *netconf.Session
}

// withSessions opens a NETCONF session to every switch (bounded by the
// pool's parallelism) and runs fn on each.
func withSessions(ctx context.Context, pool *sshdrv.Pool, lab *inventory.Lab, fn func(ctx context.Context, s session) error) error {
	ts, err := switchTargets(lab)
	if err != nil {
		return err
	}
	return pool.ForEach(ctx, ts, func(ctx context.Context, t sshdrv.Target) error {
		s, err := netconf.Dial(ctx, pool, t, t.Addr)
		if err != nil {
			return err
		}
		defer s.Close()
		return fn(ctx, session{t.Name, s})
	})
}

// PlanQoS reads every switch's running QoS and diffs it against the profile.
func PlanQoS(ctx context.Context, pool *sshdrv.Pool, lab *inventory.Lab, p *QoSProfile) ([]SwitchChange, error) {
	var mu sync.Mutex
	var out []SwitchChange
	err := withSessions(ctx, pool, lab, func(ctx context.Context, s session) error {
		run, err := s.s.GetConfig("running")
		if err != nil {
			return err
		}
		have, err := netconf.ParseQoS(run)
		if err != nil {
			return fmt.Errorf("switch %s: %w", s.name, err)
		}
		mu.Lock()
		defer mu.Unlock()
		for _, d := range netconf.DiffQoS(have, p.Want()) {
			out = append(out, SwitchChange{s.name, d})
		}
		return nil
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].Switch < out[j].Switch })
	return out, err
}

// ApplyQoS sets the profile on every switch that differs, in two phases:
// every switch stages a confirmed commit; then each reads back and
// confirms. If a switch fails to stage: with atomic, every staged switch is
// rolled back (all keep their previous config); without it, the others
// confirm and only the failing one keeps its previous config. Switches
// that already match are left alone.
func ApplyQoS(ctx context.Context, pool *sshdrv.Pool, lab *inventory.Lab, p *QoSProfile, atomic bool) ([]SwitchResult, error) {
	want := p.Want()
	payload := netconf.RenderQoS(want)
	ts, err := switchTargets(lab)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	results := map[string]*SwitchResult{}
	sessions := map[string]*netconf.Session{}
	record := func(name, outcome string, err error) {
		mu.Lock()
		defer mu.Unlock()
		r := &SwitchResult{Switch: name, Outcome: outcome}
		if err != nil {
			r.Error = err.Error()
		}
		results[name] = r
	}
	stageErr := pool.ForEach(ctx, ts, func(ctx context.Context, t sshdrv.Target) error {
		s, err := netconf.Dial(ctx, pool, t, t.Addr)
		if err != nil {
			record(t.Name, "failed", err)
			return err
		}
		if run, err := s.GetConfig("running"); err == nil {
			if have, err := netconf.ParseQoS(run); err == nil && len(netconf.DiffQoS(have, want)) == 0 {
				record(t.Name, "unchanged", nil)
				return s.Close()
			}
		}
		if err := s.Stage(payload, 2*time.Minute); err != nil {
			record(t.Name, "failed", err)
			s.Close()
			return err
		}
		mu.Lock()
		sessions[t.Name] = s
		mu.Unlock()
		return nil
	})
	rollback := atomic && stageErr != nil
	var staged []sshdrv.Target
	for _, t := range ts {
		if sessions[t.Name] != nil {
			staged = append(staged, t)
		}
	}
	confirmErr := pool.ForEach(ctx, staged, func(ctx context.Context, t sshdrv.Target) error {
		s := sessions[t.Name]
		defer s.Close()
		if rollback {
			record(t.Name, "rolled-back", nil)
			return s.Cancel()
		}
		err := s.Confirm(func(running string) error {
			got, err := netconf.ParseQoS(running)
			if err != nil {
				return err
			}
			if d := netconf.DiffQoS(got, want); len(d) > 0 {
				return fmt.Errorf("%d settings read back differ, first %s = %s", len(d), d[0].Field, d[0].From)
			}
			return nil
		})
		if err != nil {
			record(t.Name, "failed", err)
			return err
		}
		record(t.Name, "committed", nil)
		return nil
	})
	out := make([]SwitchResult, 0, len(results))
	for _, r := range results {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Switch < out[j].Switch })
	return out, errors.Join(stageErr, confirmErr)
}

func switchTargets(lab *inventory.Lab) ([]sshdrv.Target, error) {
	var ts []sshdrv.Target
	for _, sw := range lab.Switches {
		cred, ok := lab.CredentialFor(sw.Name)
		if !ok || sw.Mgmt.NETCONF == "" {
			return nil, fmt.Errorf("switch %s has no NETCONF endpoint or credential in lab %s", sw.Name, lab.Name)
		}
		ts = append(ts, sshdrv.Target{Name: sw.Name, Addr: sw.Mgmt.NETCONF, Cred: cred})
	}
	return ts, nil
}
