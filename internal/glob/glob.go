// Package glob matches the wildcard patterns of IAM policies and of warden's own
// settings: * matches any run of characters (slashes and colons included), ? matches
// one character, and nothing else is special. IAM matches actions this way (case
// aside: see MatchFold) and resource ARNs; waivers match uids this way.
package glob

import "strings"

// Match reports whether s matches pattern, byte for byte.
func Match(pattern, s string) bool {
	px, sx := 0, 0
	starP, starS := -1, 0
	for sx < len(s) {
		switch {
		case px < len(pattern) && pattern[px] == '*':
			// A star is a wildcard even where s holds a star. Remember it and how much
			// of s it has taken, to give it one more byte when what follows fails.
			starP, starS = px, sx
			px++
		case px < len(pattern) && (pattern[px] == '?' || pattern[px] == s[sx]):
			px++
			sx++
		case starP >= 0:
			px = starP + 1
			starS++
			sx = starS
		default:
			return false
		}
	}
	for px < len(pattern) && pattern[px] == '*' {
		px++
	}
	return px == len(pattern)
}

// MatchFold is Match ignoring ASCII case, as IAM matches action names ("S3:get*" matches
// "s3:GetObject").
func MatchFold(pattern, s string) bool {
	return Match(strings.ToLower(pattern), strings.ToLower(s))
}
