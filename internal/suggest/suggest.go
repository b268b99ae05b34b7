package suggest

import "fmt"

// DidYouMean is ` (did you mean "x"?)` for the known name nearest name,
// if it is fewer than maxEdits edits away, else "". Of equally near names
// the first wins.
func DidYouMean(name string, known []string, maxEdits int) string {
	best, ok := Nearest(name, known, maxEdits)
	if !ok {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// Nearest is the known name nearest name if it is fewer than maxEdits
// edits away; of equally near names the first wins.
func Nearest(name string, known []string, maxEdits int) (string, bool) {
	best, bestD := "", maxEdits
	for _, k := range known {
		if d := Distance(name, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best, best != ""
}

// Distance is the Levenshtein distance of a and b, in bytes.
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
