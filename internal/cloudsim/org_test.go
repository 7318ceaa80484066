package cloudsim

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/organizations"
	orgtypes "github.com/aws/aws-sdk-go-v2/service/organizations/types"
)

var orgJoined = time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)

func orgTestWorld() *World {
	return &World{AWS: AWS{
		Organization: &Organization{ID: "o-abc123defg", Management: "111111111111"},
		Accounts: []*Account{
			{ID: "111111111111", Name: "management", Email: "aws-mgmt@acme.example", Root: Root{Created: orgJoined}},
			{ID: "222222222222", Name: "prod", Email: "aws-prod@acme.example", Root: Root{Created: orgJoined},
				Users: []*User{{Name: "ci", AccessKeys: []*AccessKey{{ID: "AKIAPRODCI"}}}}},
			{ID: "333333333333", Name: "legacy", Status: "SUSPENDED"},
		},
	}}
}

func TestOrganizations(t *testing.T) {
	_, cfg := sdkSim(t, orgTestWorld(), Options{})
	client := organizations.NewFromConfig(cfg)
	ctx := context.Background()

	org, err := client.DescribeOrganization(ctx, &organizations.DescribeOrganizationInput{})
	if err != nil {
		t.Fatal(err)
	}
	o := org.Organization
	if aws.ToString(o.Id) != "o-abc123defg" || aws.ToString(o.MasterAccountId) != "111111111111" ||
		aws.ToString(o.Arn) != "arn:aws:organizations::111111111111:organization/o-abc123defg" ||
		aws.ToString(o.MasterAccountEmail) != "aws-mgmt@acme.example" || o.FeatureSet != orgtypes.OrganizationFeatureSetAll {
		t.Errorf("organization %+v", o)
	}

	var ids []string
	pages := 0
	p := organizations.NewListAccountsPaginator(client, &organizations.ListAccountsInput{MaxResults: aws.Int32(2)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, a := range page.Accounts {
			ids = append(ids, aws.ToString(a.Id))
		}
	}
	if !slices.Equal(ids, []string{"111111111111", "222222222222", "333333333333"}) || pages != 2 {
		t.Errorf("accounts %v in %d pages", ids, pages)
	}

	acct, err := client.DescribeAccount(ctx, &organizations.DescribeAccountInput{AccountId: aws.String("222222222222")})
	if err != nil {
		t.Fatal(err)
	}
	a := acct.Account
	if aws.ToString(a.Arn) != "arn:aws:organizations::111111111111:account/o-abc123defg/222222222222" || aws.ToString(a.Name) != "prod" ||
		aws.ToString(a.Email) != "aws-prod@acme.example" || a.Status != orgtypes.AccountStatusActive || !aws.ToTime(a.JoinedTimestamp).Equal(orgJoined) {
		t.Errorf("account %+v", a)
	}
	legacy, err := client.DescribeAccount(ctx, &organizations.DescribeAccountInput{AccountId: aws.String("333333333333")})
	if err != nil || legacy.Account.Status != orgtypes.AccountStatusSuspended {
		t.Errorf("suspended account: %v %+v", err, legacy)
	}

	roots, err := client.ListRoots(ctx, &organizations.ListRootsInput{})
	if err != nil || len(roots.Roots) != 1 || aws.ToString(roots.Roots[0].Name) != "Root" || len(roots.Roots[0].PolicyTypes) != 1 {
		t.Errorf("roots: %v %+v", err, roots)
	}

	// A member account may describe its organisation but not list or read its accounts.
	member := organizations.NewFromConfig(cfg, func(o *organizations.Options) {
		o.Credentials = credentials.NewStaticCredentialsProvider("AKIAPRODCI", "secret", "")
	})
	if _, err := member.DescribeOrganization(ctx, &organizations.DescribeOrganizationInput{}); err != nil {
		t.Errorf("member DescribeOrganization: %v", err)
	}
	tests := []struct {
		name   string
		client *organizations.Client
		call   func(c *organizations.Client) error
		code   string
	}{
		{"member lists accounts", member, func(c *organizations.Client) error {
			_, err := c.ListAccounts(ctx, &organizations.ListAccountsInput{})
			return err
		}, "AccessDeniedException"},
		{"member lists roots", member, func(c *organizations.Client) error {
			_, err := c.ListRoots(ctx, &organizations.ListRootsInput{})
			return err
		}, "AccessDeniedException"},
		{"unknown account", client, func(c *organizations.Client) error {
			_, err := c.DescribeAccount(ctx, &organizations.DescribeAccountInput{AccountId: aws.String("999999999999")})
			return err
		}, "AccountNotFoundException"},
		{"bad token", client, func(c *organizations.Client) error {
			_, err := c.ListAccounts(ctx, &organizations.ListAccountsInput{NextToken: aws.String("x")})
			return err
		}, "InvalidInputException"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := sdkErrCode(tc.call(tc.client)); got != tc.code {
				t.Errorf("error code %q, want %q", got, tc.code)
			}
		})
	}
}

func TestOrganizationsNotInUse(t *testing.T) {
	w := orgTestWorld()
	w.AWS.Organization = nil
	sim, cfg := sdkSim(t, w, Options{})
	client := organizations.NewFromConfig(cfg, func(o *organizations.Options) { o.RetryMaxAttempts = 1 })
	ctx := context.Background()
	calls := []func() error{
		func() error {
			_, err := client.DescribeOrganization(ctx, &organizations.DescribeOrganizationInput{})
			return err
		},
		func() error { _, err := client.ListAccounts(ctx, &organizations.ListAccountsInput{}); return err },
		func() error {
			_, err := client.DescribeAccount(ctx, &organizations.DescribeAccountInput{AccountId: aws.String("111111111111")})
			return err
		},
		func() error { _, err := client.ListRoots(ctx, &organizations.ListRootsInput{}); return err },
	}
	for i, call := range calls {
		if got := sdkErrCode(call()); got != "AWSOrganizationsNotInUseException" {
			t.Errorf("call %d: %q", i, got)
		}
	}
	if err := sim.SetFaults([]Fault{{Service: "organizations", ThrottleRate: 1}}, nil); err != nil {
		t.Fatal(err)
	}
	if got := sdkErrCode(calls[0]()); got != "TooManyRequestsException" {
		t.Errorf("throttled: %q", got)
	}
}
