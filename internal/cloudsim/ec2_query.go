package cloudsim

import (
	"encoding/base64"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// EC2 Query request parsing shared by the EC2 actions: member lists, filters, DryRun and
// pagination. The offset tokens are shared by the JSON services' pagination too.

// ec2Members splits the Query list prefix.N.field=… into one form per member, in index
// order: "IpPermissions.1.IpRanges.2.CidrIp" gives member 1 the key "IpRanges.2.CidrIp",
// and a scalar list ("GroupId.1") gives its members the empty key.
func ec2Members(form url.Values, prefix string) []url.Values {
	byIdx := map[int]url.Values{}
	for k, v := range form {
		rest, ok := strings.CutPrefix(k, prefix+".")
		if !ok {
			continue
		}
		num, field, _ := strings.Cut(rest, ".")
		n, err := strconv.Atoi(num)
		if err != nil || n < 1 {
			continue
		}
		if byIdx[n] == nil {
			byIdx[n] = url.Values{}
		}
		byIdx[n][field] = v
	}
	idx := make([]int, 0, len(byIdx))
	for n := range byIdx {
		idx = append(idx, n)
	}
	slices.Sort(idx)
	out := make([]url.Values, 0, len(idx))
	for _, n := range idx {
		out = append(out, byIdx[n])
	}
	return out
}

// ec2Strings reads a scalar Query list (GroupId.1, GroupId.2, …).
func ec2Strings(form url.Values, prefix string) []string {
	var out []string
	for _, m := range ec2Members(form, prefix) {
		out = append(out, m.Get(""))
	}
	return out
}

// ec2DryRun answers DryRun=true the way EC2 does once the caller is allowed to act.
func ec2DryRun(form url.Values) error {
	if form.Get("DryRun") == "true" {
		return errf(kindInvalid, "DryRunOperation", "Request would have succeeded, but DryRun flag is set.")
	}
	return nil
}

// ec2Filter is one Filter.N: a name and values, any of which may match (with * and ?
// wildcards).
type ec2Filter struct {
	Name   string
	Values []string
}

func (f ec2Filter) match(vals ...string) bool {
	for _, p := range f.Values {
		for _, v := range vals {
			if ec2Glob(p, v) {
				return true
			}
		}
	}
	return false
}

func ec2Filters(form url.Values) ([]ec2Filter, error) {
	var out []ec2Filter
	for _, m := range ec2Members(form, "Filter") {
		f := ec2Filter{Name: m.Get("Name"), Values: ec2Strings(m, "Value")}
		if f.Name == "" {
			return nil, errf(kindInvalid, "InvalidParameterValue", "The filter 'null' is invalid")
		}
		out = append(out, f)
	}
	return out, nil
}

// ec2Glob matches s against an EC2 filter value, where * is any run of characters and ?
// any one character.
func ec2Glob(p, s string) bool {
	star, back := -1, 0
	i, j := 0, 0
	for j < len(s) {
		switch {
		case i < len(p) && (p[i] == '?' || p[i] == s[j]):
			i++
			j++
		case i < len(p) && p[i] == '*':
			star, back = i, j
			i++
		case star >= 0:
			back++
			i, j = star+1, back
		default:
			return false
		}
	}
	for i < len(p) && p[i] == '*' {
		i++
	}
	return i == len(p)
}

// ec2Page reads MaxResults (5–1000; absent: everything) and NextToken, and returns the
// window of n items to answer and the token of the next page.
func ec2Page(n int, form url.Values) (start, end int, next string, err error) {
	size := n
	if v := form.Get("MaxResults"); v != "" {
		m, err := strconv.Atoi(v)
		if err != nil || m < 5 || m > 1000 {
			return 0, 0, "", errf(kindInvalid, "InvalidParameterValue", "Value ( %s ) for parameter maxResults is invalid. Expecting a value between 5 and 1000.", v)
		}
		size = m
	}
	start, ok := offsetFromToken(form.Get("NextToken"))
	if !ok {
		return 0, 0, "", errf(kindInvalid, "InvalidPaginationToken", "The pagination token is not valid")
	}
	start, end, next = offsetWindow(n, start, size)
	return start, end, next, nil
}

// offsetToken encodes the offset of the next page as an opaque token.
func offsetToken(off int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("sim-offset:" + strconv.Itoa(off)))
}

// offsetFromToken reads a token made by offsetToken; the empty token is offset 0.
func offsetFromToken(tok string) (int, bool) {
	if tok == "" {
		return 0, true
	}
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return 0, false
	}
	v, ok := strings.CutPrefix(string(b), "sim-offset:")
	n, err := strconv.Atoi(v)
	if !ok || err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

// offsetWindow clamps the page [start, start+size) to n items and names the next page.
func offsetWindow(n, start, size int) (int, int, string) {
	start = min(start, n)
	end := min(start+max(size, 1), n)
	next := ""
	if end < n {
		next = offsetToken(end)
	}
	return start, end, next
}
