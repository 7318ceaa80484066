package remediate_test

import (
	"context"
	"testing"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/store/storetest"
)

// A fix that fails on throttling or a server error is marked transient (the daemon
// tries it again soon); one the cloud denies is not.
func TestApply_transientFailures(t *testing.T) {
	for _, c := range []struct {
		name  string
		fault cloudsim.Fault
		want  bool
	}{
		{"throttled write", cloudsim.Fault{Service: "ec2", Action: "RevokeSecurityGroupIngress", ThrottleRate: 1}, true},
		{"5xx on the write", cloudsim.Fault{Service: "ec2", Action: "RevokeSecurityGroupIngress", ErrorRate: 1}, true},
		{"throttled re-check", cloudsim.Fault{Service: "ec2", Action: "DescribeSecurityGroups", ThrottleRate: 1}, true},
		{"denied write", cloudsim.Fault{Service: "ec2", Writes: true, AccessDenied: true}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			e := start(t, storetest.Backends(t)["sqlite"](t), world(1), gates.Config{Auto: []findings.Risk{findings.RiskLow, findings.RiskMedium}})
			p := only(e.Plan(t, "alice"), "aws.ec2.revoke_ingress", 1)
			if err := e.Sim.SetFaults([]cloudsim.Fault{c.fault}, nil); err != nil {
				t.Fatal(err)
			}
			res, err := e.Machine("warden", remediate.Limits{}).Apply(ctx, p, true)
			if err != nil {
				t.Fatal(err)
			}
			it := itemOf(t, res, p.Actions[0].ID)
			if it.State != remediate.StateFailed || it.Transient != c.want {
				t.Errorf("%+v: want failed, transient %v", it, c.want)
			}
		})
	}
}
