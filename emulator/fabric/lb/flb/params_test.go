package flb_test

import (
	"testing"

	"github.com/labctl/labctl/emulator/fabric/lb/flb"
	"github.com/labctl/labctl/emulator/fabric/lb/lbtest"
)

func TestParamsAreChecked(t *testing.T) {
	t.Parallel()
	lbtest.CheckParams(t, flb.Register, "flb",
		[]string{"", "k_mode=fixed20", "k_mode=bytes,k_kb=64", "k_pos=0,bound_n=4", "stamp_at=departure,aging_tick_us=0.25"},
		[]string{"k_mode=fixed50", "k_pos=1.5", "bound_n=0", "entry_timeout_us=0", "cnm_bytes=10", "stamp_at=egress", "notify_hosts=maybe"})
}
