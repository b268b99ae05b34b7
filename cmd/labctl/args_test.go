package main

import (
	"reflect"
	"testing"
)

func TestInterspersedFlags(t *testing.T) {
	app := newApp()
	for _, tc := range []struct{ in, want []string }{
		{[]string{"labctl", "report", "runs/x", "--format", "md"}, []string{"labctl", "report", "--format", "md", "runs/x"}},
		{[]string{"labctl", "run", "incast", "--lab", "l.yaml", "-v"}, []string{"labctl", "run", "--lab", "l.yaml", "-v", "incast"}},
		{[]string{"labctl", "inventory", "show", "lab.yaml", "--json"}, []string{"labctl", "inventory", "show", "--json", "lab.yaml"}},
		{[]string{"labctl", "run", "--out=o", "s"}, []string{"labctl", "run", "--out=o", "s"}},
		{[]string{"labctl", "run", "s", "--", "--not-a-flag"}, []string{"labctl", "run", "s", "--", "--not-a-flag"}},
	} {
		if got := interspersed(app, tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%v: got %v want %v", tc.in, got, tc.want)
		}
	}
}
