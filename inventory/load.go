package inventory

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/labctl/labctl/internal/yamlpos"
)

// Problems is the list of findings Validate returns; each prints as
// file:line: field: message.
type Problems = yamlpos.Problems

// Load reads and parses a lab file. It does not validate; Resolve does both.
func Load(path string) (*Lab, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("lab %s: %w", path, err)
	}
	return Parse(data, path)
}

// secretKeys are keys that would hold a secret inline; a lab holds only
// references to secrets.
var secretKeys = map[string]bool{"password": true, "token": true, "secret": true, "private_key": true, "passphrase": true}

// Parse decodes a lab file. Unknown keys and inline secrets are errors with
// file:line.
func Parse(data []byte, filename string) (*Lab, error) {
	// Inline secrets first: they would also be unknown keys, but the
	// user needs to hear that a lab holds references only.
	root, err := yamlpos.Parse(data, filename)
	if err != nil {
		return nil, err
	}
	var ps Problems
	if findSecrets(yamlpos.New(filename, root), &ps, "", root); ps.Err() != nil {
		return nil, ps.Err()
	}
	var lab Lab
	ix, err := yamlpos.Decode(data, filename, &lab)
	if err != nil {
		return nil, err
	}
	lab.File = filename
	lab.pos = ix
	dir := filepath.Dir(filename)
	abs := func(p *string) {
		if *p != "" && !filepath.IsAbs(*p) && !strings.HasPrefix(*p, "~") {
			*p = filepath.Join(dir, *p)
			if a, err := filepath.Abs(*p); err == nil {
				*p = a
			}
		}
	}
	abs(&lab.KnownHosts)
	for k, c := range lab.Credentials {
		abs(&c.KeyFile)
		abs(&c.PasswordFile)
		lab.Credentials[k] = c
	}
	if lab.Services.InfluxDB != nil {
		abs(&lab.Services.InfluxDB.TokenFile)
	}
	if lab.GNMITLS != nil {
		abs(&lab.GNMITLS.CA)
	}
	for i := range lab.Switches {
		if g := lab.Switches[i].GNMITLS; g != nil {
			abs(&g.CA)
		}
	}
	return &lab, nil
}

func findSecrets(ix *yamlpos.Index, ps *Problems, path string, n *yaml.Node) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			findSecrets(ix, ps, path, c)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			p := k
			if path != "" {
				p = path + "." + k
			}
			if secretKeys[strings.ToLower(k)] {
				ix.Add(ps, p, "inline secrets are not allowed: use password_env, password_file, token_env, token_file, key_file or agent")
			}
			findSecrets(ix, ps, p, n.Content[i+1])
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			findSecrets(ix, ps, fmt.Sprintf("%s[%d]", path, i), c)
		}
	}
}

// UnmarshalYAML reads "device:port", split at the first colon.
func (e *LinkEnd) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return fmt.Errorf("line %d: a link end is written device:port", n.Line)
	}
	dev, port, ok := strings.Cut(s, ":")
	if !ok || dev == "" || port == "" {
		return fmt.Errorf("line %d: link end %q: want device:port", n.Line, s)
	}
	e.Device, e.Port = dev, port
	return nil
}

// MarshalYAML writes "device:port".
func (e LinkEnd) MarshalYAML() (any, error) { return e.String(), nil }

// WriteFile writes lab as a lab file that Load reads back.
func WriteFile(path string, lab *Lab) error {
	b, err := yaml.Marshal(lab)
	if err != nil {
		return fmt.Errorf("lab %s: %w", lab.Name, err)
	}
	hdr := "# written by labctl; lab " + lab.Name + "\n"
	if err := os.WriteFile(path, append([]byte(hdr), b...), 0o644); err != nil {
		return fmt.Errorf("lab %s: %w", path, err)
	}
	return nil
}
