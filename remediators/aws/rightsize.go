package aws

// Right-sizing from usage: a policy document without what a principal's usage shows
// unused for a window (internal/usage judges that). Only what the data speaks for is removed: a service or
// action AWS tracks and reports unused for the whole window. Everything else (untracked
// actions, wildcards within a used service, NotAction, Deny, conditions, resources) stays
// as it was, so the new document allows a subset of the old, which subsetOf checks.

import (
	"fmt"
	"strings"

	"github.com/warden-sec/warden/internal/usage"
	"github.com/warden-sec/warden/remediators/internal/attr"
)

// rightsized is a document without the unused grants: the new document (nil when no
// statement is left), the patterns removed (as written), and whether anything changed.
type rightsized struct {
	doc     map[string]any
	removed []string
	changed bool
}

// rightsize rewrites doc's Allow statements with an Action: a pattern of an unused
// service is removed, a literal action AWS reports unused is removed, and "*" becomes the
// used services' "svc:*" when u knows them all (u.AllGranted). A statement left without an action is removed; every other
// statement, and every other key of the changed ones, stays as it was.
func rightsize(doc map[string]any, u usage.Grants) rightsized {
	var out rightsized
	stmts, single := statementList(doc["Statement"])
	kept := make([]any, 0, len(stmts))
	for _, raw := range stmts {
		s, ok := raw.(map[string]any)
		if !ok || s["Effect"] != "Allow" || s["Action"] == nil {
			kept = append(kept, raw)
			continue
		}
		actions, isList := patternList(s["Action"])
		var left []any
		here := len(out.removed)
		for _, p := range actions {
			ps, _ := p.(string)
			switch {
			case ps == "*":
				// "*" becomes the used services only when the data lists every service
				// granted (Access Advisor): from data listing only what is unused (Access
				// Analyzer) the services used are unknown, and "*" stays.
				if len(u.Services) == 0 || !u.AllGranted {
					left = append(left, p)
					continue
				}
				out.removed = append(out.removed, ps)
				for _, ns := range u.Used {
					left = append(left, ns+":*")
				}
			case removable(ps, u):
				out.removed = append(out.removed, ps)
			default:
				left = append(left, p)
			}
		}
		if len(out.removed) == here {
			kept = append(kept, raw)
			continue
		}
		if len(left) == 0 {
			continue
		}
		ns := make(map[string]any, len(s))
		for k, v := range s {
			ns[k] = v
		}
		if len(left) == 1 && !isList {
			ns["Action"] = left[0]
		} else {
			ns["Action"] = left
		}
		kept = append(kept, ns)
	}
	out.changed = len(out.removed) > 0
	if !out.changed {
		out.doc = doc
		return out
	}
	if len(kept) == 0 {
		return out
	}
	out.doc = make(map[string]any, len(doc))
	for k, v := range doc {
		out.doc[k] = v
	}
	if single && len(kept) == 1 {
		out.doc["Statement"] = kept[0]
	} else {
		out.doc["Statement"] = kept
	}
	return out
}

// removable reports whether pattern p grants only what u shows unused: every action of
// an unused service (a service part without wildcards), or one literal action reported
// unused.
func removable(p string, u usage.Grants) bool {
	svc, action, ok := strings.Cut(strings.ToLower(p), ":")
	if !ok || strings.ContainsAny(svc, "*?") {
		return false
	}
	if u.Services[svc] {
		return true
	}
	return !strings.ContainsAny(action, "*?") && u.Actions[svc+":"+action]
}

// statementList is a document's statements, and whether it held a single object.
func statementList(v any) ([]any, bool) {
	switch s := v.(type) {
	case []any:
		return s, false
	case nil:
		return nil, false
	default:
		return []any{s}, true
	}
}

// patternList is an Action value as a list, and whether it was one.
func patternList(v any) ([]any, bool) {
	if l, ok := v.([]any); ok {
		return l, true
	}
	return []any{v}, false
}

// subsetOf checks that every Allow statement of newDoc is a statement of oldDoc with the
// same keys, Action aside, whose every action pattern is covered by a pattern of the old
// statement (the same, "*", or "svc:*" covering a pattern of svc): the new document
// allows nothing the old did not. Statements other than Allow must be unchanged.
func subsetOf(newDoc, oldDoc map[string]any) error {
	if newDoc == nil {
		return nil // no statement left: allows nothing
	}
	olds, _ := statementList(oldDoc["Statement"])
	news, _ := statementList(newDoc["Statement"])
	i := 0
	for n, raw := range news {
		s, ok := raw.(map[string]any)
		matched := false
		for ; i < len(olds); i++ {
			o, ok2 := olds[i].(map[string]any)
			if !ok || !ok2 {
				if sameValue(raw, olds[i]) {
					matched = true
					i++
					break
				}
				continue
			}
			if sameExceptAction(s, o) && actionsCovered(s["Action"], o["Action"]) {
				matched = true
				i++
				break
			}
		}
		if !matched {
			return fmt.Errorf("statement %d of the new document is not a narrowing of a statement of the old one", n)
		}
	}
	return nil
}

func sameExceptAction(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || (k != "Action" && !sameValue(v, w)) {
			return false
		}
	}
	return a["Effect"] == "Allow" || sameValue(a["Action"], b["Action"])
}

func actionsCovered(newA, oldA any) bool {
	news, _ := patternList(newA)
	olds, _ := patternList(oldA)
	for _, p := range news {
		ps, _ := p.(string)
		lp := strings.ToLower(ps)
		covered := false
		for _, q := range olds {
			qs, _ := q.(string)
			lq := strings.ToLower(qs)
			svc, _, _ := strings.Cut(lp, ":")
			if lq == lp || lq == "*" || lq == svc+":*" {
				covered = true
				break
			}
		}
		if !covered {
			return false
		}
	}
	return true
}

func sameValue(a, b any) bool {
	ca, err1 := attr.Canonical(a)
	cb, err2 := attr.Canonical(b)
	return err1 == nil && err2 == nil && string(ca) == string(cb)
}
