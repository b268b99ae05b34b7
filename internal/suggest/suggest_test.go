package suggest

import "testing"

func TestDidYouMean(t *testing.T) {
	known := []string{"conga", "conweave", "drill", "ecmp"}
	for _, tc := range []struct {
		name string
		max  int
		want string
	}{
		{"conwave", 3, ` (did you mean "conweave"?)`},
		{"drll", 3, ` (did you mean "drill"?)`},
		{"ecmp", 3, ` (did you mean "ecmp"?)`},
		{"hula", 3, ""},
		{"conwave", 1, ""},
	} {
		if got := DidYouMean(tc.name, known, tc.max); got != tc.want {
			t.Errorf("DidYouMean(%q, %d) = %q, want %q", tc.name, tc.max, got, tc.want)
		}
	}
	if d := Distance("kitten", "sitting"); d != 3 {
		t.Errorf("Distance(kitten, sitting) = %d", d)
	}
}
