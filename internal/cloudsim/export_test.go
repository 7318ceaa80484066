package cloudsim

// EvalIdentity exposes the simulator's identity-policy evaluation to the external tests
// (iam_eval_fuzz_test.go): the decision of one document on an action and a resource, with
// an empty request context, as "allow", "implicit deny" or "explicit deny".
func EvalIdentity(doc, action, resource string) string {
	d := evalIdentity(parseStatements([]Doc{Doc(doc)}), authzRequest{Action: action, Resource: resource, Context: map[string]string{}})
	return [...]string{implicitDeny: "implicit deny", allowed: "allow", explicitDeny: "explicit deny"}[d]
}
