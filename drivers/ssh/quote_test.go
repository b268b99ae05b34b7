package ssh

import "testing"

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/opt/labctl/images/lb/1.0": "/opt/labctl/images/lb/1.0",
		"drill-lb@1.0.0":            "drill-lb@1.0.0",
		"":                          "''",
		"a b":                       "'a b'",
		"it's":                      `'it'\''s'`,
		"$(rm -rf /)":               "'$(rm -rf /)'",
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
}
