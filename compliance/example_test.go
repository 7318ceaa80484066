package compliance_test

import (
	"fmt"
	"time"

	"github.com/warden-sec/warden/compliance"
	"github.com/warden-sec/warden/findings"
)

func ExampleLoad() {
	fws, err := compliance.Load()
	if err != nil {
		panic(err)
	}
	for _, f := range fws {
		automated := 0
		for _, c := range f.Controls {
			if c.Assessment == compliance.Automated && len(c.Policies) > 0 {
				automated++
			}
		}
		fmt.Printf("%s: %d of %d controls automated by warden\n", f.ID, automated, len(f.Controls))
	}
	// Output:
	// cis-aws-3.0: 18 of 62 controls automated by warden
	// cis-gcp-2.0: 11 of 84 controls automated by warden
	// iso-27001-2022: 10 of 93 controls automated by warden
	// nist-800-53-r5: 22 of 1007 controls automated by warden
	// pci-dss-4.0: 9 of 280 controls automated by warden
	// soc2: 5 of 61 controls automated by warden
}

func ExampleEvaluate() {
	fw, err := compliance.Lookup("cis-aws-3.0")
	if err != nil {
		panic(err)
	}
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	sg := "arn:aws:ec2:eu-west-1:111111111111:security-group/sg-0bastion"
	rep := compliance.Evaluate(fw, compliance.Input{
		At: at,
		// What a scan found: SSH open to the world, once over IPv4 (waived until March),
		// once over IPv6.
		Findings: []findings.Finding{
			{Policy: "WARDEN-AWS-NET-001", Resource: sg, Key: sg + "#ingress/tcp/22-22/0.0.0.0/0", Status: findings.StatusWaived,
				Waiver: &findings.WaiverRef{Owner: "alice@acme.example", Reason: "bastion behind a NACL", Expires: at.AddDate(0, 4, 0)}},
			{Policy: "WARDEN-AWS-NET-001", Resource: sg, Key: sg + "#ingress/tcp/22-22/::/0", Status: findings.StatusOpen},
		},
		// How the policies ran: on how many resources each was evaluated.
		Policies: map[string]compliance.PolicyRun{
			"WARDEN-AWS-NET-001": {Resources: 12}, "WARDEN-AWS-NET-002": {Resources: 12}, "WARDEN-AWS-NET-003": {Resources: 12},
			"WARDEN-AWS-IAM-007": {Resources: 30}, "WARDEN-AWS-IAM-015": {Resources: 40}, "WARDEN-AWS-IAM-041": {Resources: 3},
		},
		// The settings in effect, defaults included.
		Settings: map[string]any{"access_key_unused_days": 90, "password_unused_days": 45},
	})
	for _, c := range rep.Controls {
		switch c.ID {
		case "1.12", "5.2", "5.3":
			fmt.Printf("%s %s: %s\n", c.ID, c.Status, c.Reason)
			for _, f := range c.Waived {
				fmt.Printf("    waived by %s until %s: %s\n", f.Waiver.Owner, f.Waiver.Expires.Format("2006-01-02"), f.Waiver.Reason)
			}
		}
	}
	for _, fam := range rep.Families {
		if fam.ID == "5" {
			fmt.Printf("networking: %d pass, %d fail, %d not covered, %d manual: %.0f%%\n",
				fam.Score.Pass, fam.Score.Fail, fam.Score.NotCovered, fam.Score.Manual, *fam.Score.Percent)
		}
	}
	// Output:
	// 1.12 not_covered: setting access_key_unused_days is 90; a pass relies on it being at most 45
	// 5.2 pass: nothing open: WARDEN-AWS-NET-001 on 12 resources, WARDEN-AWS-NET-002 on 12, WARDEN-AWS-NET-003 on 12
	//     waived by alice@acme.example until 2027-04-01: bastion behind a NACL
	// 5.3 fail: 1 open finding of WARDEN-AWS-NET-001 on 1 resource
	// networking: 1 pass, 1 fail, 3 not covered, 1 manual: 50%
}
