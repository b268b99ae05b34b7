package tofino

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// BundleSpec describes a bundle for WriteBundle.
type BundleSpec struct {
	Name, Version string
	Target        string // default tofino
	Program       string
	LB            LB
	// Salt goes into the fake artifacts, so that two bundles can differ in
	// content while their names agree.
	Salt string
}

// WriteBundle writes a small bundle into dir for tests and demos: FAKE
// compiler artifacts (a schema and a context that are valid JSON but
// describe no tables, and a "binary" that says it is not one), a real
// bf_switchd conf naming them in the layout of hardware-surfaces 3.1, and
// a manifest with their sha256s. An emulated switch loads it; a real
// Tofino would refuse the binary.
func WriteBundle(dir string, s BundleSpec) (*Manifest, error) {
	if s.Target == "" {
		s.Target = "tofino"
	}
	bin, ok := targetBinary[s.Target]
	if !ok {
		return nil, fmt.Errorf("target %q: want tofino or tofino2", s.Target)
	}
	family := map[string]string{"tofino": "Tofino", "tofino2": "Tofino2"}[s.Target]
	conf := map[string]any{
		"chip_list": []any{map[string]any{"chip_family": family, "instance": 0,
			"pcie_sysfs_prefix": "/sys/devices/pci0000:00/0000:00:03.0/0000:05:00.0",
			"sds_fw_path":       "share/tofino_sds_fw/avago/firmware"}},
		"instance": 0,
		"p4_devices": []any{map[string]any{"device-id": 0, "agent0": "lib/libpltfm_mgr.so",
			"p4_programs": []any{map[string]any{"program-name": s.Program, "bfrt-config": "bf-rt.json",
				"p4_pipelines": []any{map[string]any{"p4_pipeline_name": "pipe", "context": "pipe/context.json",
					"config": "pipe/" + bin, "pipe_scope": []int{0, 1, 2, 3}}}}}}},
	}
	confJSON, _ := json.MarshalIndent(conf, "", "    ")
	files := []struct {
		path string
		data []byte
	}{
		{"bf-rt.json", fmt.Appendf(nil, "{\n    \"schema_version\": \"1.0.0\",\n    \"tables\": [],\n    \"learn_filters\": [],\n    \"_fake\": \"labctl test artifact %s\"\n}\n", s.Salt)},
		{"pipe/context.json", fmt.Appendf(nil, "{\n    \"program_name\": %q,\n    \"target\": %q,\n    \"tables\": [],\n    \"_fake\": \"labctl test artifact %s\"\n}\n", s.Program, s.Target, s.Salt)},
		{"pipe/" + bin, fmt.Appendf(nil, "FAKE %s for P4 program %s (labctl test artifact, not a compiled program) %s\n", bin, s.Program, s.Salt)},
		{s.Program + ".conf", append(confJSON, '\n')},
	}
	m := &Manifest{Name: s.Name, Version: s.Version, Target: s.Target, Program: s.Program, LB: s.LB}
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, f.data, 0o644); err != nil {
			return nil, err
		}
		sum := sha256.Sum256(f.data)
		m.Files = append(m.Files, File{Path: f.path, SHA256: hex.EncodeToString(sum[:])})
	}
	raw, err := MarshalManifest(m)
	if err != nil {
		return nil, err
	}
	if _, err := ParseManifest(raw, ManifestFile); err != nil {
		return nil, err
	}
	return m, os.WriteFile(filepath.Join(dir, ManifestFile), raw, 0o644)
}
