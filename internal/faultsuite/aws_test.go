package faultsuite_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediate/remediatetest"
	"github.com/warden-sec/warden/store/storetest"
)

// groups is how many security groups open to SSH the AWS world holds.
const groups = 2

// awsCloud is remediatetest.World: one account whose security groups open SSH to the
// internet beside an office rule, and whose password policy is too weak. Its fixes are
// a revoke of each SSH rule and the account's password policy, one write each.
var awsCloud = cloud{
	start: startAWS,
	net:   fix{"aws.ec2.revoke_ingress", "ec2", "RevokeSecurityGroupIngress"},
	iam:   fix{"aws.iam.set_password_policy", "iam", "UpdateAccountPasswordPolicy"},

	netReads: []cloudsim.Fault{{Service: "ec2", Action: "Describe*"}}, netScope: "ec2/us-east-1",
	iamReads: []cloudsim.Fault{{Service: "iam", Action: "Get*"}}, iamScope: "iam",
	verifyRead: cloudsim.Fault{Service: "ec2", Action: "DescribeSecurityGroups"},
	limits:     map[string]float64{"ec2": 2, "iam": 3},

	applyNet: func(w *cloudsim.World, a remediate.PlannedAction) {
		if g := securityGroup(w, a.Target); g != nil {
			g.Ingress = slices.DeleteFunc(g.Ingress, sshRule)
		}
	},
	open: func(w *cloudsim.World, a remediate.PlannedAction) bool {
		switch a.Remediator {
		case "aws.ec2.revoke_ingress":
			g := securityGroup(w, a.Target)
			return g != nil && slices.ContainsFunc(g.Ingress, sshRule)
		case "aws.iam.set_password_policy":
			// CIS: at least 14 characters, none of the last 24 passwords reused.
			p := w.AWS.Accounts[0].PasswordPolicy
			return p == nil || p.MinimumPasswordLength < 14 || p.PasswordReusePrevention < 24
		}
		panic("no check of " + a.Remediator)
	},
	untouched: func(t *testing.T, w *cloudsim.World) {
		t.Helper()
		var office int
		for _, g := range w.AWS.Accounts[0].SecurityGroups {
			for _, r := range g.Ingress {
				if r.FromPort == 443 {
					office++
				}
			}
		}
		if office != groups {
			t.Errorf("%d of the %d office rules left: a revoke took the wrong rule", office, groups)
		}
	},
}

func TestFaults_cloud(t *testing.T) {
	for _, c := range cloudCases(awsCloud) {
		t.Run(c.name, func(t *testing.T) { runCloudCase(t, awsCloud, c) })
	}
}

func startAWS(t *testing.T) *rig {
	e := remediatetest.Start(t, storetest.Backends(t)["sqlite"](t), remediatetest.World(groups), approvers, remediatetest.Options{})
	return &rig{sim: e.Sim, store: e.Store, log: e.Log, gate: e.Gate, engine: e.Engine, registry: e.Registry,
		reader: e.Reader, accounts: e.Accounts, now: e.Now}
}

// securityGroup is the group of a uid (…:security-group/sg-…), nil if there is none.
func securityGroup(w *cloudsim.World, uid string) *cloudsim.SecurityGroup {
	id := uid[strings.LastIndex(uid, "/")+1:]
	if i := strings.IndexByte(id, '#'); i >= 0 {
		id = id[:i]
	}
	for _, g := range w.AWS.Accounts[0].SecurityGroups {
		if g.ID == id {
			return g
		}
	}
	return nil
}

// sshRule reports whether a rule lets 0.0.0.0/0 in on port 22.
func sshRule(r cloudsim.Rule) bool { return r.FromPort == 22 && r.CIDR == "0.0.0.0/0" }
