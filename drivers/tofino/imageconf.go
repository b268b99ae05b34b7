package tofino

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
)

// Conf is what labctl reads of a bf_switchd conf file (JSON, written by
// p4c-gen-bfrt-conf; hardware-surfaces 3.1): the programs it loads and the
// artifact paths of each. Both the current form (p4_devices / p4_programs /
// p4_pipelines) and the legacy one (p4_program_list) are understood.
type Conf struct {
	ChipFamilies []string      `json:"chip_families,omitempty"` // chip_list[].chip_family
	Programs     []ConfProgram `json:"programs"`
}

// ConfProgram is one P4 program of a conf.
type ConfProgram struct {
	Name      string         `json:"name"`
	BFRT      string         `json:"bfrt_config"`
	Pipelines []ConfPipeline `json:"pipelines"`
	Field     string         `json:"field"` // where in the JSON, for messages
}

// ConfPipeline is one pipeline profile of a program.
type ConfPipeline struct {
	Name    string `json:"name"`
	Context string `json:"context"`
	Config  string `json:"config"` // the binary: tofino.bin / tofino2.bin
	Scope   []int  `json:"pipe_scope,omitempty"`
	Field   string `json:"field"`
}

// ConfRef is an artifact path named in a conf, and where.
type ConfRef struct{ Field, Path string }

type confJSON struct {
	ChipList []struct {
		ChipFamily string `json:"chip_family"`
	} `json:"chip_list"`
	P4Devices []struct {
		P4Programs []struct {
			Name      string `json:"program-name"`
			BFRT      string `json:"bfrt-config"`
			Pipelines []struct {
				Name    string `json:"p4_pipeline_name"`
				Context string `json:"context"`
				Config  string `json:"config"`
				Scope   []int  `json:"pipe_scope"`
			} `json:"p4_pipelines"`
		} `json:"p4_programs"`
	} `json:"p4_devices"`
	Legacy []struct {
		Name        string `json:"program-name"`
		BFRT        string `json:"bfrt-config"`
		TableConfig string `json:"table-config"` // context.json
		TofinoBin   string `json:"tofino-bin"`
	} `json:"p4_program_list"`
}

// ParseConf reads a bf_switchd conf.
func ParseConf(data []byte) (*Conf, error) {
	var j confJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, fmt.Errorf("not a bf_switchd conf (JSON): %w", err)
	}
	c := &Conf{}
	for _, ch := range j.ChipList {
		c.ChipFamilies = append(c.ChipFamilies, ch.ChipFamily)
	}
	for d, dev := range j.P4Devices {
		for p, prog := range dev.P4Programs {
			cp := ConfProgram{Name: prog.Name, BFRT: prog.BFRT, Field: fmt.Sprintf("p4_devices[%d].p4_programs[%d]", d, p)}
			for i, pl := range prog.Pipelines {
				cp.Pipelines = append(cp.Pipelines, ConfPipeline{Name: pl.Name, Context: pl.Context, Config: pl.Config,
					Scope: pl.Scope, Field: fmt.Sprintf("%s.p4_pipelines[%d]", cp.Field, i)})
			}
			c.Programs = append(c.Programs, cp)
		}
	}
	for i, prog := range j.Legacy {
		f := fmt.Sprintf("p4_program_list[%d]", i)
		c.Programs = append(c.Programs, ConfProgram{Name: prog.Name, BFRT: prog.BFRT, Field: f,
			Pipelines: []ConfPipeline{{Name: "pipe", Context: prog.TableConfig, Config: prog.TofinoBin, Field: f}}})
	}
	if len(c.Programs) == 0 {
		return nil, fmt.Errorf("the conf loads no P4 program (no p4_devices[].p4_programs or p4_program_list)")
	}
	return c, nil
}

// Artifacts lists every file the conf makes bf_switchd load.
func (c *Conf) Artifacts() []ConfRef {
	var out []ConfRef
	for _, p := range c.Programs {
		out = append(out, ConfRef{p.Field + ".bfrt-config", p.BFRT})
		for _, pl := range p.Pipelines {
			ctx, cfg := ".context", ".config"
			if pl.Field == p.Field { // legacy names
				ctx, cfg = ".table-config", ".tofino-bin"
			}
			out = append(out, ConfRef{pl.Field + ctx, pl.Context}, ConfRef{pl.Field + cfg, pl.Config})
		}
	}
	return out
}

// ProgramNames lists the programs the conf loads.
func (c *Conf) ProgramNames() []string {
	var out []string
	for _, p := range c.Programs {
		out = append(out, p.Name)
	}
	return out
}

// InstalledConfFile is the conf labctl derives from an image's own conf
// when it installs the image on a switch (see InstallConf).
const InstalledConfFile = "labctl-switchd.conf"

// InstallConf derives the conf bf_switchd is started with on a switch: the
// bundle's conf names its artifacts relative to the bundle root; bf_switchd
// resolves relative paths against --install-dir ($SDE_INSTALL, which must
// stay the SDE so the agent libraries and firmware are found), so the
// artifact paths are made absolute under dir, the image's directory on the
// switch. Absolute paths in a conf are honoured by bf_switchd (it is the
// usual fix for "initialized 0 devices" with a conf outside the SDE). Every
// other field is kept. The result is deterministic for a given conf and dir.
func InstallConf(conf []byte, dir string) ([]byte, error) {
	if _, err := ParseConf(conf); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(conf))
	dec.UseNumber() // keep numbers as written
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	abs := func(m map[string]any, keys ...string) {
		for _, k := range keys {
			if s, ok := m[k].(string); ok && s != "" && !path.IsAbs(s) {
				m[k] = path.Join(dir, s)
			}
		}
	}
	each := func(v any, fn func(map[string]any)) {
		l, _ := v.([]any)
		for _, e := range l {
			if m, ok := e.(map[string]any); ok {
				fn(m)
			}
		}
	}
	each(doc["p4_devices"], func(dev map[string]any) {
		each(dev["p4_programs"], func(p map[string]any) {
			abs(p, "bfrt-config")
			each(p["p4_pipelines"], func(pl map[string]any) { abs(pl, "context", "config") })
		})
	})
	each(doc["p4_program_list"], func(p map[string]any) { abs(p, "bfrt-config", "table-config", "tofino-bin") })
	b, err := json.MarshalIndent(doc, "", "    ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
