package qosdriver

import (
	"errors"
	"strings"
	"testing"
)

func TestBuiltinPicks(t *testing.T) {
	t.Parallel()
	r := Builtin()
	for _, tc := range []struct {
		driver, os, model string
		want              string
		err               string
		field             string
	}{
		{want: NETCONF},
		{model: "emulated-tofino", want: NETCONF},
		{model: "Wedge100BF-32X", want: NETCONF}, // an unclaimed model is no error
		{driver: SDE, want: SDE},
		{os: "bf-sde", want: SDE},
		{driver: NETCONF, os: "bf-sde", want: NETCONF}, // qos_driver wins
		{driver: "sdee", err: `qos_driver "sdee": unknown switch QoS driver (did you mean "sde"?); known: `, field: "qos_driver"},
		{os: "bf-sed", err: `os "bf-sed": unknown switch OS (did you mean "bf-sde"?); known: `, field: "os"},
		{os: "windows", err: `os "windows": unknown switch OS; known: `, field: "os"},
	} {
		got, err := r.Pick(tc.driver, tc.os, tc.model)
		if tc.err != "" {
			var e *Error
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) || !errors.As(err, &e) || e.Field() != tc.field {
				t.Errorf("Pick(%q, %q, %q) = %v, want an error on %s starting %q", tc.driver, tc.os, tc.model, err, tc.field, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Pick(%q, %q, %q) = %q, %v; want %q", tc.driver, tc.os, tc.model, got, err, tc.want)
		}
	}
}

func TestRegisterRefusesDuplicates(t *testing.T) {
	t.Parallel()
	r := New("a")
	if err := r.Register(Driver{Name: "a", OS: []string{"x"}, Models: []string{"m"}}); err != nil {
		t.Fatal(err)
	}
	for _, d := range []Driver{
		{Name: "a"},
		{Name: "b", OS: []string{"x"}},
		{Name: "c", Models: []string{"m"}},
		{Name: ""},
	} {
		if err := r.Register(d); err == nil {
			t.Errorf("Register(%+v) accepted a duplicate or nameless driver", d)
		}
	}
	if got := strings.Join(r.Names(), ","); got != "a" {
		t.Errorf("a refused driver was kept: names %s", got)
	}
}
