package registry

import (
	"errors"
	"strings"
	"testing"
)

func TestRegisterRefusesDuplicatesAndEmptyNames(t *testing.T) {
	t.Parallel()
	r := New[int]("engine")
	if err := r.Register("packet", 1); err != nil {
		t.Fatal(err)
	}
	if err := r.Register("packet", 2); err == nil || !strings.Contains(err.Error(), `engine "packet" registered twice`) {
		t.Errorf("duplicate: %v", err)
	}
	if err := r.Register("", 3); err == nil {
		t.Error("an empty name was accepted")
	}
	if v, err := r.Get("packet"); err != nil || v != 1 {
		t.Errorf("Get(packet) = %d, %v: a refused duplicate replaced the first", v, err)
	}
}

func TestGetUnknownNamesTheKnownAndTheNearest(t *testing.T) {
	t.Parallel()
	r := New[string]("engine")
	for _, n := range []string{"packet", "flow"} {
		if err := r.Register(n, n); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ name, want, nearest string }{
		{"flwo", `"flwo": unknown engine (did you mean "flow"?); known: flow, packet`, "flow"},
		{"pakcet", `"pakcet": unknown engine (did you mean "packet"?); known: flow, packet`, "packet"},
		{"quantum", `"quantum": unknown engine; known: flow, packet`, ""},
	} {
		_, err := r.Get(tc.name)
		var u *UnknownError
		if !errors.As(err, &u) {
			t.Fatalf("Get(%q) = %v, want an *UnknownError", tc.name, err)
		}
		if err.Error() != tc.want || u.Suggestion() != tc.nearest {
			t.Errorf("Get(%q) = %q (nearest %q), want %q (nearest %q)", tc.name, err, u.Suggestion(), tc.want, tc.nearest)
		}
	}
	if _, err := New[int]("sink").Get("x"); err == nil || !strings.HasSuffix(err.Error(), "known: none") {
		t.Errorf("empty registry: %v", err)
	}
	if got := strings.Join(r.Names(), ","); got != "flow,packet" {
		t.Errorf("Names = %s, want sorted", got)
	}
}
