package cloudsim

import (
	"container/list"
	"maps"
	"net/url"
	"slices"
	"strings"
)

// answerCache keeps the encoded answers of generated accounts' read calls (IAM and EC2
// List*, Get*, Describe*) until something could have changed them, so that a sweep of
// an unchanged organisation does not spend the simulator's CPU encoding the same XML
// again (GeneratedAccounts.AnswerCacheMiB; benchmarks only: the simulator shares the
// machine's cores with the warden it serves, and a real cloud does not).
//
// What could change an answer: a call to the account that is not a read (any write),
// AssumeRole (it stamps the role's last use, in the role's account), a drift and a move
// of the clock (Drift, Advance, or their /_sim/ routes: every account at once).
// Starting a report changes nothing a cached read answers unless the report it makes
// differs from the last one (generateCredentialReport); faults are met before the
// cache. No call records a key's use in a generated account (keyOf knows the world's
// accounts' keys only), so its credential report changes only with the account. Answers
// that depend on usage recorded at every call (Access Advisor, a key's last use) are
// never cached. s.mu guards it.
type answerCache struct {
	limit, size int // bytes
	global      uint64
	versions    map[string]uint64 // account → version, bumped at each change
	entries     map[string]*list.Element
	lru         list.List // of *answer, most recently used first
	// hits and misses count lookups of cacheable calls.
	hits, misses int
}

// answer is one encoded answer and the versions it was encoded at.
type answer struct {
	key             string
	global, version uint64
	inner           []byte
}

func newAnswerCache(mib int) *answerCache {
	return &answerCache{limit: mib << 20, versions: map[string]uint64{}, entries: map[string]*list.Element{}}
}

// uncachedReads are the reads the simulator serves whose answers depend on the clock or
// on what every call records.
var uncachedReads = map[string]bool{
	"GetServiceLastAccessedDetails": true, // Access Advisor: every call records its use
	"GetAccessKeyLastUsed":          true, // every call signed with a user's key records it
}

// cacheable reports whether call c's answer may be cached: a read of IAM or EC2 on a
// generated account.
func (s *Sim) cacheable(c *call) bool {
	if s.answers == nil || (c.Service != "iam" && c.Service != "ec2") || !s.gen.owns(c.Account) || uncachedReads[c.Action] {
		return false
	}
	return isRead(c.Action)
}

// answerKey names call c's answer: who asked (GetUser without a name answers the
// caller), where, and the request's parameters in order.
func answerKey(c *call, form url.Values) string {
	parts := []string{c.Account, c.Principal, c.Service, c.Region}
	for _, k := range slices.Sorted(maps.Keys(form)) {
		for _, v := range form[k] {
			parts = append(parts, k+"="+v)
		}
	}
	return strings.Join(parts, "\x00")
}

// get is the encoded answer under key, if the account has not changed since it was
// encoded.
func (a *answerCache) get(account, key string) ([]byte, bool) {
	el, ok := a.entries[key]
	if !ok {
		a.misses++
		return nil, false
	}
	e := el.Value.(*answer)
	if e.global != a.global || e.version != a.versions[account] {
		a.remove(el)
		a.misses++
		return nil, false
	}
	a.lru.MoveToFront(el)
	a.hits++
	return e.inner, true
}

// put keeps an answer encoded at versions (global, version), unless the account changed
// since: then it would never be served.
func (a *answerCache) put(account, key string, global, version uint64, inner []byte) {
	if global != a.global || version != a.versions[account] || len(inner) > a.limit {
		return
	}
	if el, ok := a.entries[key]; ok {
		a.remove(el)
	}
	a.entries[key] = a.lru.PushFront(&answer{key: key, global: global, version: version, inner: inner})
	a.size += len(inner)
	for a.size > a.limit {
		a.remove(a.lru.Back())
	}
}

func (a *answerCache) remove(el *list.Element) {
	e := el.Value.(*answer)
	a.lru.Remove(el)
	delete(a.entries, e.key)
	a.size -= len(e.inner)
}

// changed records that account's answers may have changed.
func (a *answerCache) changed(account string) {
	if a != nil {
		a.versions[account]++
	}
}

// changedAll records that every answer may have changed.
func (a *answerCache) changedAll() {
	if a != nil {
		a.global++
	}
}

// reportJobs are the calls that start a report and change nothing a cached read answers,
// but the report itself (generateCredentialReport records that change).
var reportJobs = map[string]bool{
	"GenerateCredentialReport":           true,
	"GenerateServiceLastAccessedDetails": true,
}

// afterCall records what a query call that is not a cached read may have changed: its
// account for a write; for AssumeRole, the role's account, where it stamps the role's
// last use.
func (s *Sim) afterCall(c *call, form url.Values) {
	switch {
	case s.answers == nil:
	case c.Service == "sts":
		if rest, ok := strings.CutPrefix(form.Get("RoleArn"), "arn:aws:iam::"); ok && c.Action == "AssumeRole" {
			acct, _, _ := strings.Cut(rest, ":")
			s.answers.changed(acct)
		}
	case isRead(c.Action) || reportJobs[c.Action]:
	default:
		s.answers.changed(c.Account)
	}
}

// isRead reports whether a query action only reads, by its name.
func isRead(action string) bool {
	return strings.HasPrefix(action, "List") || strings.HasPrefix(action, "Get") || strings.HasPrefix(action, "Describe")
}
