package yamlpos

import (
	"strings"
	"testing"
)

func TestDecodeStrictWithIndex(t *testing.T) {
	var v struct {
		A int            `yaml:"a"`
		M map[int]string `yaml:"m"`
	}
	ix, err := Decode([]byte("a: 1\nm:\n  3: x\n"), "f.yaml", &v)
	if err != nil || v.A != 1 || ix.Line("m.3") != 3 {
		t.Fatalf("%v %+v line %d", err, v, ix.Line("m.3"))
	}
	if _, err := Decode([]byte("a: 1\nb: 2\n"), "f.yaml", &v); err == nil || !strings.Contains(err.Error(), "f.yaml") || !strings.Contains(err.Error(), "line 2: field b not found") {
		t.Fatalf("unknown key: %v", err)
	}
	if _, err := Decode([]byte("a: [\n"), "f.yaml", &v); err == nil || !strings.HasPrefix(err.Error(), "f.yaml: ") {
		t.Fatalf("syntax: %v", err)
	}
}
