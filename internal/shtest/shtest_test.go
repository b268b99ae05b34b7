package shtest

import (
	"slices"
	"testing"
)

func TestWords(t *testing.T) {
	for cmd, want := range map[string][]string{
		`mlnx_qos -i 'a b' --pfc 0,0,0,1`: {"mlnx_qos", "-i", "a b", "--pfc", "0,0,0,1"},
		"echo 1 > '/sys/x y'":             {"echo", "1", "/sys/x y"},
		"x a;echo INJECTED":               {"INJECTED\nx", "a"}, // the injected echo runs first
	} {
		if got := Words(t, cmd); !slices.Equal(got, want) {
			t.Errorf("%q: %q, want %q", cmd, got, want)
		}
	}
}
