package cloudsim

import (
	"fmt"
	"time"
)

// LargeAccount sizes a synthetic account for benchmarks.
type LargeAccount struct {
	ID             string
	Roles, Users   int
	SecurityGroups int      // spread evenly over Regions
	Regions        []string // default us-east-1, eu-west-1, eu-central-1, ap-southeast-2
	// KeyShare is the share of users holding an access key (default 0.05): most users of
	// a large account sign in through SSO, a few automation users hold keys.
	KeyShare float64
	// Used is when the passwords, keys and roles in use were last used (default
	// 2026-11-01 12:00 UTC). A fixed date ages: 45 days on, every used password looks
	// unused to the pack, so the simulator passes a date relative to its start.
	Used time.Time
}

// Build makes the account: every user in a group, roles with trust policies and a
// customer-managed policy each tenth role, security groups with a few rules each, two in
// three of them used by an instance. The content is deterministic.
func (l LargeAccount) Build() *Account {
	if len(l.Regions) == 0 {
		l.Regions = []string{"us-east-1", "eu-west-1", "eu-central-1", "ap-southeast-2"}
	}
	if l.KeyShare == 0 {
		l.KeyShare = 0.05
	}
	t0 := time.Date(2024, 3, 1, 9, 0, 0, 0, time.UTC)
	used := l.Used
	if used.IsZero() {
		used = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	}
	a := &Account{ID: l.ID, Name: "large-" + l.ID, Regions: l.Regions,
		Root:           Root{MFA: true},
		PasswordPolicy: &PasswordPolicy{MinimumPasswordLength: 14, RequireSymbols: true, RequireNumbers: true, RequireUppercaseCharacters: true, RequireLowercaseCharacters: true, PasswordReusePrevention: 24},
	}
	const trust = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"lambda.amazonaws.com"},"Action":"sts:AssumeRole"}]}`
	a.Policies = append(a.Policies, &Policy{Name: "ReadOnlyAccess", AWSManaged: true, Created: t0,
		Document: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["ec2:Describe*","s3:Get*","s3:List*"],"Resource":"*"}]}`})
	for g := 0; g < max(1, l.Users/100); g++ {
		a.Groups = append(a.Groups, &Group{Name: fmt.Sprintf("team-%03d", g), Created: t0,
			AttachedPolicies: []string{"arn:aws:iam::aws:policy/ReadOnlyAccess"}})
	}
	keyEvery := int(1 / l.KeyShare)
	for i := range l.Users {
		u := &User{Name: fmt.Sprintf("user-%05d", i), Created: t0.Add(time.Duration(i) * time.Minute),
			PasswordEnabled: i%3 == 0, MFA: i%3 == 0, Groups: []string{a.Groups[i%len(a.Groups)].Name}}
		if i%3 == 0 {
			u.PasswordLastUsed = &used
		}
		if i%keyEvery == 0 {
			u.AccessKeys = []*AccessKey{{ID: makeID("AKIA", l.ID+u.Name, 16), Created: t0, LastUsed: &used, LastUsedService: "s3", LastUsedRegion: l.Regions[0]}}
		}
		a.Users = append(a.Users, u)
	}
	for i := range l.Roles {
		r := &Role{Name: fmt.Sprintf("svc-%05d", i), Path: "/service/", Created: t0, AssumeRolePolicy: trust}
		if i%2 == 0 {
			r.LastUsed, r.LastUsedRegion = &used, l.Regions[i%len(l.Regions)]
		}
		if i%10 == 0 {
			p := &Policy{Name: fmt.Sprintf("svc-%05d-access", i), Created: t0,
				Document: Doc(fmt.Sprintf(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["dynamodb:GetItem","dynamodb:PutItem"],"Resource":"arn:aws:dynamodb:*:%s:table/t%d"}]}`, l.ID, i))}
			a.Policies = append(a.Policies, p)
			r.AttachedPolicies = []string{"arn:aws:iam::" + l.ID + ":policy/" + p.Name}
		} else {
			r.InlinePolicies = []InlinePolicy{{Name: "logs", Document: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"logs:PutLogEvents","Resource":"*"}]}`}}
		}
		a.Roles = append(a.Roles, r)
	}
	for i := range l.SecurityGroups {
		region := l.Regions[i%len(l.Regions)]
		g := &SecurityGroup{ID: fmt.Sprintf("sg-%017x", i+1), Name: fmt.Sprintf("app-%05d", i), Region: region, Description: "app tier",
			Ingress: []Rule{{Protocol: "tcp", FromPort: 443, ToPort: 443, CIDR: "10.0.0.0/8"}, {Protocol: "tcp", FromPort: 8080, ToPort: 8080, SourceGroup: fmt.Sprintf("sg-%017x", i%97+1)}},
			Egress:  []Rule{{Protocol: "-1", FromPort: -1, ToPort: -1, CIDR: "0.0.0.0/0"}}}
		if i%50 == 0 {
			g.Ingress = append(g.Ingress, Rule{Protocol: "tcp", FromPort: 22, ToPort: 22, CIDR: "0.0.0.0/0"})
		}
		a.SecurityGroups = append(a.SecurityGroups, g)
		// Two groups in three serve an instance; the others are left over, as in a real
		// account of this size.
		if i%3 != 2 {
			a.NetworkInterfaces = append(a.NetworkInterfaces, &NetworkInterface{ID: fmt.Sprintf("eni-%017x", i+1), Region: region,
				Groups: []string{g.ID}, Kind: "ec2_instance", AttachedTo: fmt.Sprintf("i-%017x", i+1)})
		}
	}
	return a
}
