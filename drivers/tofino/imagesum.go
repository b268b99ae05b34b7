package tofino

import (
	"fmt"
	"strings"
)

// ParseSHA256Sum reads GNU coreutils sha256sum output: one line per file,
// "<64 hex>  <name>" (a '*' instead of the second space in binary mode).
// A name holding a backslash or newline is escaped and its line starts
// with a backslash. It returns name -> hex digest.
func ParseSHA256Sum(out []byte) (map[string]string, error) {
	sums := map[string]string{}
	for i, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		if line == "" {
			continue
		}
		escaped := strings.HasPrefix(line, `\`)
		if escaped {
			line = line[1:]
		}
		if len(line) < 67 || (line[65] != ' ' && line[65] != '*') || line[64] != ' ' || !sha256RE.MatchString(line[:64]) {
			return nil, fmt.Errorf("sha256sum output line %d: %q is not \"<sha256>  <file>\"", i+1, truncate(line, 120))
		}
		name := line[66:]
		if escaped {
			var err error
			if name, err = unescapeName(name); err != nil {
				return nil, fmt.Errorf("sha256sum output line %d: %w", i+1, err)
			}
		}
		sums[name] = line[:64]
	}
	return sums, nil
}

func unescapeName(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 == len(s) {
			return "", fmt.Errorf("file name %q ends in a lone backslash", s)
		}
		i++
		switch s[i] {
		case '\\':
			b.WriteByte('\\')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		default:
			return "", fmt.Errorf("file name %q: unknown escape \\%c", s, s[i])
		}
	}
	return b.String(), nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
