package remediate_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2sdk "github.com/aws/aws-sdk-go-v2/service/ec2"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediate/remediatetest"
	"github.com/warden-sec/warden/store/storetest"
)

// BenchmarkApply200 applies 200 revocations (one open SSH rule on each of 200 security
// groups) against the simulator, which adds 20 ms to every call and throttles above 20
// calls/s per service; warden's clients are paced at the same 20 calls/s. The run can
// take no less than its EC2 calls at 20/s: x-minimum is how close it comes.
//
//	go test ./remediate -run '^$' -bench Apply200 -benchtime 1x
func BenchmarkApply200(b *testing.B) {
	const n, limit = 200, 20.0
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		w := &cloudsim.World{Latency: cloudsim.Duration(20 * time.Millisecond),
			RateLimits: map[string]float64{"iam": limit, "sts": limit, "ec2": limit}}
		a := world(0).AWS.Accounts[0]
		a.PasswordPolicy, a.Users = nil, nil
		for i := range n {
			id := fmt.Sprintf("sg-%017d", i+1)
			a.SecurityGroups = append(a.SecurityGroups, &cloudsim.SecurityGroup{ID: id, Name: "web-" + id, Region: "us-east-1", VPC: "vpc-1",
				Description: "web", Ingress: []cloudsim.Rule{{Protocol: "tcp", FromPort: 22, ToPort: 22, CIDR: "0.0.0.0/0", Description: "anywhere"}}})
			// Each serves an instance: a re-read asks its interfaces, not who names it.
			a.NetworkInterfaces = append(a.NetworkInterfaces, &cloudsim.NetworkInterface{Region: "us-east-1", Groups: []string{id}})
		}
		w.AWS.Accounts = append(w.AWS.Accounts, a)
		gcfg := gates.Config{Auto: []findings.Risk{findings.RiskLow, findings.RiskMedium}}
		e := remediatetest.Start(b, storetest.Backends(b)["sqlite"](b), w, gcfg, remediatetest.Options{RateLimit: limit})
		p := only(e.Plan(b, "alice"), "aws.ec2.revoke_ingress", n)
		if len(p.Actions) != n {
			b.Fatalf("%d actions planned, want %d", len(p.Actions), n)
		}
		e.Sim.ResetCalls()
		m := e.Machine("alice", remediate.Limits{MaxActions: n, MaxPerAccount: n})
		b.StartTimer()
		start := time.Now()
		res, err := m.Apply(ctx, p, true)
		elapsed := time.Since(start)
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		verified := 0
		for _, it := range res.Items {
			if it.State == remediate.StateVerified {
				verified++
			}
		}
		if verified != n || res.Stopped != "" {
			b.Fatalf("%d of %d verified, stopped %q", verified, n, res.Stopped)
		}
		ec2, throttled := e.Sim.CallsTo("ec2"), 0
		perOp := map[string]int{}
		for op, v := range e.Sim.Calls() {
			throttled += v.Throttled
			perOp[op] = v.Calls
		}
		b.Logf("calls per operation: %v", perOp)
		least := time.Duration(float64(ec2) / limit * float64(time.Second))
		// The world, through the SDK in one call: no group lets the internet in any more.
		out, err := ec2sdk.NewFromConfig(e.SDK).DescribeSecurityGroups(ctx, &ec2sdk.DescribeSecurityGroupsInput{})
		if err != nil {
			b.Fatal(err)
		}
		for _, g := range out.SecurityGroups {
			for _, perm := range g.IpPermissions {
				for _, r := range perm.IpRanges {
					if aws.ToString(r.CidrIp) == "0.0.0.0/0" {
						b.Fatalf("%s still open to the internet after apply", aws.ToString(g.GroupId))
					}
				}
			}
		}
		if len(out.SecurityGroups) < n {
			b.Fatalf("%d groups described, want %d", len(out.SecurityGroups), n)
		}
		b.ReportMetric(elapsed.Seconds(), "s/apply")
		b.ReportMetric(float64(ec2), "ec2-calls")
		b.ReportMetric(float64(throttled), "throttled")
		b.ReportMetric(elapsed.Seconds()/least.Seconds(), "x-minimum")
		b.StartTimer()
	}
}
