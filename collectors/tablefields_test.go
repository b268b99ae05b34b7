package collectors

import (
	"maps"
	"testing"
)

// FuzzTableFields: the scanner for flat objects reads any object it
// accepts to the same fields as encoding/json, and an input it refuses
// is read by encoding/json alone; neither panics.
func FuzzTableFields(f *testing.F) {
	for _, s := range []string{
		`{"SAI_PORT_STAT_PFC_3_RX_PKTS":"5","SAI_PORT_STAT_PFC_3_TX_PKTS":7}`, `{}`, ` { } `, `{"a":"1","a":"2"}`,
		`{"SAI_PORT_STAT_PFC_3_RX_PKTS":"\u0035"}`, `{"SAI_PORT_STAT_PFC_3_RX_PKTS":"18446744073709551616"}`,
		`{"SAI_PORT_STAT_PFC_3_RX_PKTS":01}`, `{"SAI_PORT_STAT_PFC_3_RX_PKTS":1e3}`, `{"SAI_PORT_STAT_PFC_3_RX_PKTS":-1}`,
		`{"SAI_PORT_STAT_PFC_3_RX_PKTS":{"x":1}}`, `{"SAI_PORT_STAT_PFC_3_RX_PKTS":"5",}`, `{"SAI_PORT_STAT_PFC_3_RX_PKTS":"5"} x`,
		`{"a":"1","a":"x"}`, `{"a":"x","a":"1"}`, `[1]`, `"5"`, ``, `{"SAI_PORT_STAT_PFC_3_RX_PKTS":null}`, "{\"SAI_PORT_STAT_PFC_3_RX_PKTS\":\"5\x00\"}",
	} {
		f.Add([]byte(s))
	}
	names := map[string]string{"a": "a", "SAI_PORT_STAT_PFC_3_RX_PKTS": "pfc3_rx", "SAI_PORT_STAT_PFC_3_TX_PKTS": "pfc3_tx"}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := map[string]any{}
		bad, _ := tableFields(b, names, got)
		want, wantBad := map[string]any{}, 0
		ms := slowMembers(b)
		if ms == nil {
			wantBad = 1
		}
		for _, m := range ms {
			if name, ok := names[string(m.key)]; ok {
				if v, ok := digits(m.val); ok {
					want[name] = v
				} else {
					wantBad++
				}
			}
		}
		if !maps.Equal(got, want) || bad != wantBad {
			t.Errorf("%q: fields %v (%d unreadable), encoding/json's %v (%d)", b, got, bad, want, wantBad)
		}
	})
}

// TestDigitsAsParseUint: digits reads what strconv.ParseUint(s, 10, 64)
// reads and refuses what it refuses.
func TestDigitsAsParseUint(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"0", 0, true}, {"007", 7, true}, {"18446744073709551615", 1<<64 - 1, true}, {"18446744073709551616", 0, false},
		{"", 0, false}, {"+1", 0, false}, {"-1", 0, false}, {"1_000", 0, false}, {" 1", 0, false}, {"1.0", 0, false},
	} {
		if v, ok := digits([]byte(c.in)); v != c.want || ok != c.ok {
			t.Errorf("digits(%q) = %d, %v; want %d, %v", c.in, v, ok, c.want, c.ok)
		}
	}
}
