package cloudsim

import (
	"encoding/json"
	"regexp"
	"strings"

	"github.com/warden-sec/warden/internal/glob"
)

// Evaluation of identity-based policies, as AWS evaluates them within one account when no
// resource policy, permissions boundary, session policy or SCP is in play: an explicit Deny
// wins; otherwise an Allow is needed; otherwise the request is implicitly denied.
//
// Modelled:
//   - Action / NotAction: `*` and `?` wildcards, case-insensitive.
//   - Resource / NotResource: `*` and `?` wildcards, case-sensitive, matched on the whole
//     ARN (a `*` may span colons, as AWS lets a trailing `*` do). A request whose resource
//     is "*" (an operation without resource-level permissions, see requestResource) is
//     matched only by a pattern of stars ("*"): a statement naming some ARN does not grant
//     it, as AWS requires "*" for such actions.
//   - Policy variables in Resource: ${aws:username}, ${aws:userid}, ${aws:PrincipalAccount}
//     and the other context keys below, substituted; any other variable (a default value,
//     ${*}, tags) leaves the statement undecided.
//   - Condition: the operators String{Equals,NotEquals,EqualsIgnoreCase,NotEqualsIgnoreCase,
//     Like,NotLike}, Arn{Equals,NotEquals,Like,NotLike} and Bool, each optionally IfExists,
//     on the keys aws:RequestedRegion, aws:PrincipalArn, aws:PrincipalAccount,
//     aws:PrincipalType, aws:username and aws:userid (values without policy variables).
//     Blocks are ANDed, keys ANDed, values ORed (negated operators: none of them).
//
// Anything else (another operator or key, ForAnyValue:/ForAllValues:, a variable the
// simulator cannot fill) makes the statement undecided, and an undecided statement is
// read to the caller's loss: an Allow does not apply, a Deny does.

// tri is a decision that may be unknown.
type tri int8

const (
	no tri = iota
	maybe
	yes
)

// and is the conjunction of two tri-state answers: a certain no wins, then unknown.
func (t tri) and(u tri) tri { return min(t, u) }

func triOf(b bool) tri {
	if b {
		return yes
	}
	return no
}

// authzRequest is what a call asks of the principal's policies: an IAM action
// ("s3:ListBucket"), the resource it acts on (an ARN, or "*"), and the request context
// (keys lower-cased: "aws:requestedregion").
type authzRequest struct {
	Action   string
	Resource string
	Context  map[string]string
}

// authzDecision is the outcome of evaluating a principal's identity policies.
type authzDecision int8

const (
	implicitDeny authzDecision = iota
	allowed
	explicitDeny
)

// policyStmt is one statement of a permissions policy, read for evaluation.
type policyStmt struct {
	deny        bool
	notAction   bool
	actions     []string // lower-cased patterns
	notResource bool
	resources   []string
	conditions  map[string]map[string]json.RawMessage // operator → key → value(s)
	condBad     bool                                  // a Condition that cannot be read
}

// parseStatements reads the statements of documents. A statement that is not a policy
// statement (no Effect Allow or Deny, no Action or NotAction, no Resource or NotResource)
// applies to nothing: IAM refuses to store such documents, so they come only from worlds.
func parseStatements(docs []Doc) []policyStmt {
	var out []policyStmt
	for _, d := range docs {
		var doc struct {
			Statement json.RawMessage
		}
		if json.Unmarshal([]byte(d), &doc) != nil {
			continue
		}
		var raws []json.RawMessage
		if json.Unmarshal(doc.Statement, &raws) != nil {
			raws = []json.RawMessage{doc.Statement}
		}
		for _, raw := range raws {
			if st, ok := parseStatement(raw); ok {
				out = append(out, st)
			}
		}
	}
	return out
}

func parseStatement(raw json.RawMessage) (policyStmt, bool) {
	var st struct {
		Effect      string
		Action      stringList
		NotAction   stringList
		Resource    stringList
		NotResource stringList
		Condition   json.RawMessage
	}
	if json.Unmarshal(raw, &st) != nil || (st.Effect != "Allow" && st.Effect != "Deny") {
		return policyStmt{}, false
	}
	p := policyStmt{deny: st.Effect == "Deny", actions: st.Action, resources: st.Resource}
	switch {
	case st.Action == nil && st.NotAction != nil:
		p.notAction, p.actions = true, st.NotAction
	case st.Action == nil:
		return policyStmt{}, false
	}
	switch {
	case st.Resource == nil && st.NotResource != nil:
		p.notResource, p.resources = true, st.NotResource
	case st.Resource == nil:
		return policyStmt{}, false
	}
	p.actions = lowerAll(p.actions)
	if c := strings.TrimSpace(string(st.Condition)); c != "" && c != "null" && c != "{}" {
		if json.Unmarshal(st.Condition, &p.conditions) != nil {
			p.condBad = true
		}
	}
	return p, true
}

func lowerAll(l []string) []string {
	out := make([]string, len(l))
	for i, s := range l {
		out[i] = strings.ToLower(s)
	}
	return out
}

// evalIdentity decides a request against the statements of a principal's identity
// policies.
func evalIdentity(stmts []policyStmt, req authzRequest) authzDecision {
	action := strings.ToLower(req.Action)
	allow := false
	for _, st := range stmts {
		if anyPattern(st.actions, func(p string) bool { return glob.Match(p, action) }) == st.notAction {
			continue
		}
		applies := st.matchResource(req).and(st.matchConditions(req.Context))
		switch {
		case st.deny && applies != no:
			return explicitDeny
		case !st.deny && applies == yes:
			allow = true
		}
	}
	if allow {
		return allowed
	}
	return implicitDeny
}

// matchResource tells whether the statement's Resource (or NotResource) applies to the
// request's resource.
func (st policyStmt) matchResource(req authzRequest) tri {
	hit := no
	for _, p := range st.resources {
		m := resourceMatch(p, req)
		if m > hit {
			hit = m
		}
		if hit == yes {
			break
		}
	}
	if st.notResource {
		return yes - hit // yes ↔ no, maybe stays
	}
	return hit
}

// resourceMatch matches one Resource pattern against the request's resource.
func resourceMatch(pattern string, req authzRequest) tri {
	if strings.Contains(pattern, "${") {
		var ok bool
		if pattern, ok = substituteVars(pattern, req.Context); !ok {
			return maybe
		}
	}
	if req.Resource == "*" {
		return triOf(allStars(pattern))
	}
	return triOf(glob.Match(pattern, req.Resource))
}

// policyVarRE is a policy variable: ${aws:username}.
var policyVarRE = regexp.MustCompile(`\$\{([^}]*)\}`)

// substituteVars fills the policy variables of a pattern from the request context; ok is
// false when one cannot be filled (an unknown key, a default value, ${*}): the values
// substituted may not hold wildcards of their own, which the simulator's names never do.
func substituteVars(pattern string, ctx map[string]string) (string, bool) {
	ok := true
	out := policyVarRE.ReplaceAllStringFunc(pattern, func(m string) string {
		v, found := ctx[strings.ToLower(m[2:len(m)-1])]
		if !found || strings.ContainsAny(v, "*?") {
			ok = false
		}
		return v
	})
	return out, ok && !strings.Contains(out, "${")
}

// matchConditions evaluates the statement's Condition block against the request context.
func (st policyStmt) matchConditions(ctx map[string]string) tri {
	if st.condBad {
		return maybe
	}
	out := yes
	for op, keys := range st.conditions {
		for key, raw := range keys {
			out = out.and(evalCondition(op, key, raw, ctx))
			if out == no {
				return no
			}
		}
	}
	return out
}

// evalCondition evaluates one operator on one key.
func evalCondition(op, key string, raw json.RawMessage, ctx map[string]string) tri {
	if strings.Contains(op, ":") { // ForAnyValue:, ForAllValues: (multivalued keys)
		return maybe
	}
	base, ifExists := strings.CutSuffix(op, "IfExists")
	match, negated, ok := conditionOperator(base)
	if !ok {
		return maybe
	}
	var values stringList
	if json.Unmarshal(raw, &values) != nil {
		var b bool // Bool takes JSON booleans as well as strings
		if json.Unmarshal(raw, &b) != nil {
			return maybe
		}
		values = stringList{map[bool]string{true: "true", false: "false"}[b]}
	}
	key = strings.ToLower(key)
	if !modelledKeys[key] {
		return maybe
	}
	v, present := ctx[key]
	if !present {
		// AWS: an absent key fails a condition, except with IfExists and negated operators.
		return triOf(ifExists || negated)
	}
	hit := false
	for _, want := range values {
		if strings.Contains(want, "${") {
			return maybe
		}
		hit = hit || match(want, v)
	}
	return triOf(hit != negated)
}

// modelledKeys are the condition keys the simulator fills (see requestContext).
var modelledKeys = map[string]bool{
	"aws:requestedregion":  true,
	"aws:principalarn":     true,
	"aws:principalaccount": true,
	"aws:principaltype":    true,
	"aws:username":         true,
	"aws:userid":           true,
}

// conditionOperator is how an operator compares a policy value with the request's, and
// whether it is negated (true when no value matches).
func conditionOperator(op string) (match func(want, got string) bool, negated, ok bool) {
	equals := func(w, g string) bool { return w == g }
	fold := strings.EqualFold
	like := glob.Match
	switch op {
	case "StringEquals":
		return equals, false, true
	case "StringNotEquals":
		return equals, true, true
	case "StringEqualsIgnoreCase":
		return fold, false, true
	case "StringNotEqualsIgnoreCase":
		return fold, true, true
	case "StringLike", "ArnLike", "ArnEquals": // ArnEquals takes wildcards too
		return like, false, true
	case "StringNotLike", "ArnNotLike", "ArnNotEquals":
		return like, true, true
	case "Bool":
		return fold, false, true
	}
	return nil, false, false
}
