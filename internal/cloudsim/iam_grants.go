package cloudsim

import (
	"encoding/json"
	"strings"

	"github.com/warden-sec/warden/internal/glob"
)

// What a principal's permissions policies grant, service by service and action by action,
// as Access Advisor needs it: ServicesLastAccessed lists the services the policies allow.

// serviceCatalog names the AWS services a policy with a wildcard service ("*", "s*:Get*",
// a NotAction) can grant, by namespace, with the name IAM's ServiceName gives them.
//
// Limits: AWS knows some 400 services; this is a fixed table of the common ones. A report
// also lists any namespace a policy names literally or an access record uses, with its
// namespace as its name when it is not here. So "*" grants these services and no other,
// where AWS would list every service it has.
var serviceCatalog = map[string]string{
	"acm":                  "AWS Certificate Manager",
	"athena":               "Amazon Athena",
	"aws-marketplace":      "AWS Marketplace",
	"cloudformation":       "AWS CloudFormation",
	"cloudshell":           "AWS CloudShell",
	"cloudtrail":           "AWS CloudTrail",
	"cloudwatch":           "Amazon CloudWatch",
	"config":               "AWS Config",
	"dynamodb":             "Amazon DynamoDB",
	"ec2":                  "Amazon EC2",
	"ecr":                  "Amazon Elastic Container Registry",
	"ecs":                  "Amazon Elastic Container Service",
	"eks":                  "Amazon Elastic Kubernetes Service",
	"elasticloadbalancing": "Elastic Load Balancing",
	"events":               "Amazon EventBridge",
	"glue":                 "AWS Glue",
	"guardduty":            "Amazon GuardDuty",
	"iam":                  "AWS Identity and Access Management",
	"kms":                  "AWS Key Management Service",
	"lambda":               "AWS Lambda",
	"logs":                 "Amazon CloudWatch Logs",
	"organizations":        "AWS Organizations",
	"rds":                  "Amazon RDS",
	"route53":              "Amazon Route 53",
	"s3":                   "Amazon S3",
	"secretsmanager":       "AWS Secrets Manager",
	"securityhub":          "AWS Security Hub",
	"sns":                  "Amazon SNS",
	"sqs":                  "Amazon SQS",
	"ssm":                  "AWS Systems Manager",
	"sso":                  "AWS IAM Identity Center",
	"sts":                  "AWS Security Token Service",
	"support":              "AWS Support",
}

// serviceName is the ServiceName of a namespace: the catalog's, else the namespace.
func serviceName(ns string) string {
	if n, ok := serviceCatalog[ns]; ok {
		return n
	}
	return ns
}

// grantStmt is one statement of a permissions policy, reduced to what decides whether it
// grants or denies an action. Patterns are lower-cased: IAM matches actions regardless of
// case.
type grantStmt struct {
	deny     bool
	not      bool     // the patterns are a NotAction
	patterns []string // "s3:get*", "*"
	// sure is a Deny that always applies: no condition, every resource. A deny that
	// depends on a condition or a resource does not take a service away.
	sure bool
}

// grants are the statements of every permissions policy of a principal.
type grants []grantStmt

// policyGrants reads the statements of documents; a document that is not a policy is
// skipped (the simulator stores what writes validated, and world files what they say).
func policyGrants(docs []Doc) grants {
	var out grants
	for _, d := range docs {
		var doc struct {
			Statement json.RawMessage
		}
		if json.Unmarshal([]byte(d), &doc) != nil {
			continue
		}
		var stmts []json.RawMessage
		if json.Unmarshal(doc.Statement, &stmts) != nil {
			stmts = []json.RawMessage{doc.Statement}
		}
		for _, raw := range stmts {
			var st struct {
				Effect      string
				Action      stringList
				NotAction   stringList
				Resource    stringList
				NotResource json.RawMessage
				Condition   json.RawMessage
			}
			if json.Unmarshal(raw, &st) != nil {
				continue
			}
			g := grantStmt{deny: st.Effect == "Deny", patterns: st.Action}
			if st.Effect != "Allow" && st.Effect != "Deny" {
				continue
			}
			if st.Action == nil && st.NotAction != nil {
				g.not, g.patterns = true, st.NotAction
			}
			for i, p := range g.patterns {
				g.patterns[i] = strings.ToLower(p)
			}
			g.sure = g.deny && len(st.Condition) == 0 && len(st.NotResource) == 0 && containsStr(st.Resource, "*")
			out = append(out, g)
		}
	}
	return out
}

// stringList is a policy element that is a string or a list of strings.
type stringList []string

// UnmarshalJSON accepts "x" and ["x", "y"].
func (l *stringList) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		*l = stringList{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*l = many
	return nil
}

func containsStr(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// splitPattern splits an action pattern into its service and action parts; "*" is both.
func splitPattern(p string) (svc, act string) {
	svc, act, ok := strings.Cut(p, ":")
	if !ok {
		return p, "*"
	}
	return svc, act
}

// allStars tells a pattern part that matches anything ("*", "**").
func allStars(p string) bool { return p != "" && strings.Trim(p, "*") == "" }

// touches tells whether the pattern matches some action of the service ns; covers,
// whether it matches every action of it.
func touches(p, ns string) bool {
	svc, _ := splitPattern(p)
	return glob.Match(svc, ns)
}

func covers(p, ns string) bool {
	svc, act := splitPattern(p)
	return glob.Match(svc, ns) && allStars(act)
}

// allowsService tells whether the statements grant some action of the service ns and do
// not surely deny all of it.
func (gs grants) allowsService(ns string) bool {
	ns = strings.ToLower(ns)
	allowed := false
	for _, g := range gs {
		switch {
		case g.deny && !g.sure:
		case g.deny && !g.not && anyPattern(g.patterns, func(p string) bool { return covers(p, ns) }):
			return false
		case g.deny && g.not && !anyPattern(g.patterns, func(p string) bool { return touches(p, ns) }):
			return false // denies every action but those of other services
		case g.deny:
		case !g.not:
			allowed = allowed || anyPattern(g.patterns, func(p string) bool { return touches(p, ns) })
		default:
			allowed = allowed || !anyPattern(g.patterns, func(p string) bool { return covers(p, ns) })
		}
	}
	return allowed
}

// allowsAction tells whether the statements grant the action ("s3:GetObject") and do not
// surely deny it.
func (gs grants) allowsAction(action string) bool {
	action = strings.ToLower(action)
	matches := func(p string) bool { return glob.Match(p, action) }
	allowed := false
	for _, g := range gs {
		hit := anyPattern(g.patterns, matches) != g.not
		switch {
		case g.deny && g.sure && hit:
			return false
		case !g.deny:
			allowed = allowed || hit
		}
	}
	return allowed
}

// namespaces are the services the statements name without a wildcard in the service
// part, which a report lists even when the catalog does not know them.
func (gs grants) namespaces() []string {
	var out []string
	for _, g := range gs {
		for _, p := range g.patterns {
			if svc, _ := splitPattern(p); !strings.ContainsAny(svc, "*?") && namespaceRE.MatchString(svc) {
				out = append(out, svc)
			}
		}
	}
	return out
}

func anyPattern(ps []string, f func(string) bool) bool {
	for _, p := range ps {
		if f(p) {
			return true
		}
	}
	return false
}
