//go:build !amd64 && !arm64

package fabric

import "unsafe"

// prefetch is a no-op where no assembly version exists (prefetch.go).
func prefetch(unsafe.Pointer) {}

// prefetch2 is a no-op where no assembly version exists (prefetch.go).
func prefetch2(unsafe.Pointer, unsafe.Pointer) {}
