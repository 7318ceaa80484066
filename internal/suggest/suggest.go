// Package suggest finds the likely intended word behind a typo, for error messages that
// say "did you mean …?".
package suggest

// Closest returns the candidate closest to s, or "" when none is within a few edits.
func Closest(s string, candidates []string) string {
	best, bestDist := "", len(s)/3+2
	for _, c := range candidates {
		if d := Distance(s, c); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// Distance is the Levenshtein distance between a and b.
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
