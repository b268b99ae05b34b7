package yamlpos

import (
	"bytes"
	"fmt"

	"gopkg.in/yaml.v3"
)

// Decode parses a YAML file strictly into v (an unknown key is an error
// with its line) and returns the index for the semantic checks that follow.
// Errors are prefixed with file.
func Decode(data []byte, file string, v any) (*Index, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return New(file, &root), nil
}
