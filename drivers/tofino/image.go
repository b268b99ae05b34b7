package tofino

import (
	"bytes"
	"fmt"
	"path"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/labctl/labctl/internal/yamlpos"
)

// ManifestFile is the manifest's name at a bundle's root.
const ManifestFile = "image.yaml"

// Targets: the chips an image can be compiled for, and the binary the
// compiler writes for each (hardware-surfaces 3.1).
var targetBinary = map[string]string{"tofino": "tofino.bin", "tofino2": "tofino2.bin"}

// Manifest describes one image: what it is and every file it consists of.
type Manifest struct {
	Name    string `yaml:"name" json:"name"`
	Version string `yaml:"version" json:"version"`
	Target  string `yaml:"target" json:"target"` // tofino | tofino2
	Program string `yaml:"program" json:"program"`
	LB      LB     `yaml:"lb" json:"lb"`
	Files   []File `yaml:"files" json:"files"`
}

// LB is the load-balancing scheme the program implements, with the
// parameters it was built with (e.g. drill with d=2, m=1).
type LB struct {
	Scheme string            `yaml:"scheme" json:"scheme"`
	Params map[string]string `yaml:"params,omitempty" json:"params,omitempty"`
}

// SchemeCheck validates a load-balancing scheme and its parameters against
// the modules that implement them: the caller's (labctl passes the fabric
// twin's registry; the driver imports no emulator). A problem with Param ""
// is about the scheme's name.
type SchemeCheck func(scheme string, params map[string]string) []SchemeProblem

// SchemeProblem is one thing a SchemeCheck refuses.
type SchemeProblem struct{ Param, Msg string }

// checkScheme adds check's problems at the manifest's lines.
func (m *Manifest) checkScheme(ix *yamlpos.Index, ps *yamlpos.Problems, check SchemeCheck) {
	for _, p := range check(m.LB.Scheme, m.LB.Params) {
		field := "lb.scheme"
		if p.Param != "" {
			field = "lb.params." + p.Param
		}
		ix.Add(ps, field, "%s", p.Msg)
	}
}

// File is one artifact, by path relative to the bundle root.
type File struct {
	Path   string `yaml:"path" json:"path"`
	SHA256 string `yaml:"sha256" json:"sha256"`
}

// Ref is the image's name@version.
func (m *Manifest) Ref() string { return m.Name + "@" + m.Version }

// ConfPath is the bf_switchd conf the compiler writes: <program>.conf.
func (m *Manifest) ConfPath() string { return m.Program + ".conf" }

var (
	nameRE    = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)
	versionRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]*$`)
	programRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	schemeRE  = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)
	paramRE   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	sha256RE  = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// ParseRef splits "name@version".
func ParseRef(ref string) (name, version string, err error) {
	name, version, ok := strings.Cut(ref, "@")
	if !ok || !nameRE.MatchString(name) || !versionRE.MatchString(version) {
		return "", "", fmt.Errorf("image %q: want NAME@VERSION (e.g. drill-lb@1.0.0)", ref)
	}
	return name, version, nil
}

// ParseManifest decodes and checks a manifest; every problem is reported
// as file:line: field: message.
func ParseManifest(data []byte, file string) (*Manifest, error) {
	m, _, err := parseManifest(data, file)
	return m, err
}

// parseManifest is ParseManifest, with the positions of the manifest's
// fields for later checks (a bundle's files).
func parseManifest(data []byte, file string) (*Manifest, *yamlpos.Index, error) {
	var m Manifest
	ix, err := yamlpos.Decode(data, file, &m)
	if err != nil {
		return nil, nil, err
	}
	var ps yamlpos.Problems
	m.check(ix, &ps)
	if err := ps.Err(); err != nil {
		return nil, nil, err
	}
	return &m, ix, nil
}

func (m *Manifest) check(ix *yamlpos.Index, ps *yamlpos.Problems) {
	if !nameRE.MatchString(m.Name) {
		ix.Add(ps, "name", "%q: want lower-case letters, digits, '.', '_' or '-' (it names a directory on the switch)", m.Name)
	}
	if !versionRE.MatchString(m.Version) {
		ix.Add(ps, "version", "%q: want letters, digits, '.', '_', '+' or '-' (e.g. 1.0.0)", m.Version)
	}
	if _, ok := targetBinary[m.Target]; !ok {
		ix.Add(ps, "target", "%q: want tofino or tofino2", m.Target)
	}
	if !programRE.MatchString(m.Program) {
		ix.Add(ps, "program", "%q: want the P4 program name (letters, digits, '_')", m.Program)
	}
	if !schemeRE.MatchString(m.LB.Scheme) {
		ix.Add(ps, "lb.scheme", "%q: want the load-balancing scheme the program implements (e.g. ecmp, letflow, drill)", m.LB.Scheme)
	}
	for k := range m.LB.Params {
		if !paramRE.MatchString(k) {
			ix.Add(ps, "lb.params."+k, "%q is not a parameter name", k)
		}
	}
	if len(m.Files) == 0 {
		ix.Add(ps, "files", "an image lists its files with their sha256")
	}
	seen := map[string]bool{}
	for i, f := range m.Files {
		p := fmt.Sprintf("files[%d]", i)
		switch {
		case f.Path == "" || path.IsAbs(f.Path) || path.Clean(f.Path) != f.Path || strings.HasPrefix(f.Path, "../") ||
			f.Path == ".." || strings.ContainsAny(f.Path, "\\\n"):
			ix.Add(ps, p+".path", "%q: want a clean path relative to the bundle root (e.g. pipe/context.json)", f.Path)
		case f.Path == ManifestFile:
			ix.Add(ps, p+".path", "the manifest does not list itself")
		case seen[f.Path]:
			ix.Add(ps, p+".path", "%s is listed twice", f.Path)
		}
		seen[f.Path] = true
		if !sha256RE.MatchString(f.SHA256) {
			ix.Add(ps, p+".sha256", "%q: want 64 lower-case hex digits (sha256sum's output)", f.SHA256)
		}
	}
	if m.Program != "" && len(m.Files) > 0 && !seen[m.ConfPath()] {
		ix.Add(ps, "files", "the bf_switchd conf %s is not listed", m.ConfPath())
	}
}

// MarshalManifest renders m as image.yaml.
func MarshalManifest(m *Manifest) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return b.Bytes(), enc.Close()
}
