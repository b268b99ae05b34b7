package perftest

import (
	"bytes"
	"testing"
)

func BenchmarkParseBW(b *testing.B) {
	var out bytes.Buffer
	_ = FormatBW(&out, synthClient())
	s := out.String()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := ParseBW(s); err != nil {
			b.Fatal(err)
		}
	}
}
