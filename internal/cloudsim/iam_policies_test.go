package cloudsim

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/iam/types"
)

func TestIAMListPolicies(t *testing.T) {
	_, _, cfg := iamTestSim(t, iamTestWorld(), "AKIDSIM")
	c := iam.NewFromConfig(cfg)
	tests := []struct {
		name string
		in   iam.ListPoliciesInput
		want []string
	}{
		// AdministratorAccess is attached in the world without being listed: the account holds it.
		{"all", iam.ListPoliciesInput{}, []string{"deploy", "unused", "ReadOnlyAccess", "AdministratorAccess"}},
		{"local", iam.ListPoliciesInput{Scope: types.PolicyScopeTypeLocal}, []string{"deploy", "unused"}},
		{"aws", iam.ListPoliciesInput{Scope: types.PolicyScopeTypeAws}, []string{"ReadOnlyAccess", "AdministratorAccess"}},
		{"only attached", iam.ListPoliciesInput{OnlyAttached: true}, []string{"deploy", "AdministratorAccess"}},
		{"local attached", iam.ListPoliciesInput{Scope: types.PolicyScopeTypeLocal, OnlyAttached: true}, []string{"deploy"}},
		{"path prefix", iam.ListPoliciesInput{PathPrefix: aws.String("/x/")}, []string{"unused"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			in.MaxItems = aws.Int32(1)
			var got []string
			p := iam.NewListPoliciesPaginator(c, &in)
			for p.HasMorePages() {
				out, err := p.NextPage(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				for _, pol := range out.Policies {
					got = append(got, aws.ToString(pol.PolicyName))
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("policies %v, want %v", got, tc.want)
			}
		})
	}
}

func TestIAMPolicyVersions(t *testing.T) {
	_, _, cfg := iamTestSim(t, iamTestWorld(), "AKIDSIM")
	c := iam.NewFromConfig(cfg)
	ctx := context.Background()
	doc := func(i int) string {
		return fmt.Sprintf(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::b%d/*"}]}`, i)
	}
	cp, err := c.CreatePolicy(ctx, &iam.CreatePolicyInput{PolicyName: aws.String("app"), Path: aws.String("/apps/"),
		PolicyDocument: aws.String(doc(1)), Description: aws.String("app access")})
	if err != nil {
		t.Fatal(err)
	}
	arn := cp.Policy.Arn
	if aws.ToString(arn) != "arn:aws:iam::111111111111:policy/apps/app" || aws.ToString(cp.Policy.DefaultVersionId) != "v1" || !cp.Policy.CreateDate.Equal(iamTestNow) {
		t.Fatalf("CreatePolicy = %+v", cp.Policy)
	}
	_, err = c.CreatePolicy(ctx, &iam.CreatePolicyInput{PolicyName: aws.String("app"), Path: aws.String("/apps/"), PolicyDocument: aws.String(doc(1))})
	iamWantErr(t, err, "EntityAlreadyExists", 409)

	for i := 2; i <= maxPolicyVersions; i++ {
		v, err := c.CreatePolicyVersion(ctx, &iam.CreatePolicyVersionInput{PolicyArn: arn, PolicyDocument: aws.String(doc(i)), SetAsDefault: i == 3})
		if err != nil || aws.ToString(v.PolicyVersion.VersionId) != fmt.Sprintf("v%d", i) || v.PolicyVersion.IsDefaultVersion != (i == 3) {
			t.Fatalf("CreatePolicyVersion %d = %+v, %v", i, v, err)
		}
	}
	_, err = c.CreatePolicyVersion(ctx, &iam.CreatePolicyVersionInput{PolicyArn: arn, PolicyDocument: aws.String(doc(6))})
	var lim *types.LimitExceededException
	if !errors.As(err, &lim) {
		t.Fatalf("sixth version: %v, want LimitExceeded", err)
	}

	pol, err := c.GetPolicy(ctx, &iam.GetPolicyInput{PolicyArn: arn})
	if err != nil || aws.ToString(pol.Policy.DefaultVersionId) != "v3" || aws.ToString(pol.Policy.Description) != "app access" {
		t.Errorf("GetPolicy = %+v, %v", pol, err)
	}
	pv, err := c.GetPolicyVersion(ctx, &iam.GetPolicyVersionInput{PolicyArn: arn, VersionId: aws.String("v3")})
	if err != nil || decodeDoc(t, pv.PolicyVersion.Document) != doc(3) || !pv.PolicyVersion.IsDefaultVersion {
		t.Errorf("GetPolicyVersion(v3) = %+v, %v", pv, err)
	}
	_, err = c.DeletePolicyVersion(ctx, &iam.DeletePolicyVersionInput{PolicyArn: arn, VersionId: aws.String("v3")})
	iamWantErr(t, err, "DeleteConflict", 409)
	if _, err := c.SetDefaultPolicyVersion(ctx, &iam.SetDefaultPolicyVersionInput{PolicyArn: arn, VersionId: aws.String("v5")}); err != nil {
		t.Fatal(err)
	}
	// Version ids keep growing after deletions.
	if _, err := c.DeletePolicyVersion(ctx, &iam.DeletePolicyVersionInput{PolicyArn: arn, VersionId: aws.String("v1")}); err != nil {
		t.Fatal(err)
	}
	v6, err := c.CreatePolicyVersion(ctx, &iam.CreatePolicyVersionInput{PolicyArn: arn, PolicyDocument: aws.String(doc(6))})
	if err != nil || aws.ToString(v6.PolicyVersion.VersionId) != "v6" {
		t.Fatalf("CreatePolicyVersion after a deletion = %+v, %v", v6, err)
	}
	lv, err := c.ListPolicyVersions(ctx, &iam.ListPolicyVersionsInput{PolicyArn: arn})
	var ids []string
	for _, v := range lv.Versions {
		ids = append(ids, aws.ToString(v.VersionId))
		if v.IsDefaultVersion != (aws.ToString(v.VersionId) == "v5") {
			t.Errorf("version %s default %v", aws.ToString(v.VersionId), v.IsDefaultVersion)
		}
	}
	if err != nil || !slices.Equal(ids, []string{"v2", "v3", "v4", "v5", "v6"}) {
		t.Errorf("ListPolicyVersions = %v, %v", ids, err)
	}

	// Attach to one of each; the policy lists its entities and cannot be deleted.
	for _, attach := range []func() error{
		func() error {
			_, err := c.AttachUserPolicy(ctx, &iam.AttachUserPolicyInput{UserName: aws.String("bob"), PolicyArn: arn})
			return err
		},
		func() error {
			_, err := c.AttachRolePolicy(ctx, &iam.AttachRolePolicyInput{RoleName: aws.String("idle"), PolicyArn: arn})
			return err
		},
		func() error {
			_, err := c.AttachGroupPolicy(ctx, &iam.AttachGroupPolicyInput{GroupName: aws.String("admins"), PolicyArn: arn})
			return err
		},
		func() error { // attaching twice changes nothing
			_, err := c.AttachGroupPolicy(ctx, &iam.AttachGroupPolicyInput{GroupName: aws.String("admins"), PolicyArn: arn})
			return err
		},
	} {
		if err := attach(); err != nil {
			t.Fatal(err)
		}
	}
	ents, err := c.ListEntitiesForPolicy(ctx, &iam.ListEntitiesForPolicyInput{PolicyArn: arn})
	if err != nil || len(ents.PolicyUsers) != 1 || len(ents.PolicyRoles) != 1 || len(ents.PolicyGroups) != 1 ||
		aws.ToString(ents.PolicyUsers[0].UserName) != "bob" || aws.ToString(ents.PolicyRoles[0].RoleId) == "" {
		t.Errorf("ListEntitiesForPolicy = %+v, %v", ents, err)
	}
	ag, err := c.ListAttachedGroupPolicies(ctx, &iam.ListAttachedGroupPoliciesInput{GroupName: aws.String("admins")})
	if err != nil || len(ag.AttachedPolicies) != 2 {
		t.Errorf("ListAttachedGroupPolicies = %+v, %v", ag, err)
	}
	ar, err := c.ListAttachedRolePolicies(ctx, &iam.ListAttachedRolePoliciesInput{RoleName: aws.String("idle")})
	if err != nil || len(ar.AttachedPolicies) != 1 || aws.ToString(ar.AttachedPolicies[0].PolicyName) != "app" {
		t.Errorf("ListAttachedRolePolicies = %+v, %v", ar, err)
	}
	_, err = c.DeletePolicy(ctx, &iam.DeletePolicyInput{PolicyArn: arn})
	iamWantErr(t, err, "DeleteConflict", 409)

	_, _ = c.DetachUserPolicy(ctx, &iam.DetachUserPolicyInput{UserName: aws.String("bob"), PolicyArn: arn})
	_, _ = c.DetachRolePolicy(ctx, &iam.DetachRolePolicyInput{RoleName: aws.String("idle"), PolicyArn: arn})
	_, _ = c.DetachGroupPolicy(ctx, &iam.DetachGroupPolicyInput{GroupName: aws.String("admins"), PolicyArn: arn})
	// Still refused: the non-default versions go first.
	_, err = c.DeletePolicy(ctx, &iam.DeletePolicyInput{PolicyArn: arn})
	iamWantErr(t, err, "DeleteConflict", 409)
	for _, v := range []string{"v2", "v3", "v4", "v6"} {
		if _, err := c.DeletePolicyVersion(ctx, &iam.DeletePolicyVersionInput{PolicyArn: arn, VersionId: aws.String(v)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.DeletePolicy(ctx, &iam.DeletePolicyInput{PolicyArn: arn}); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetPolicy(ctx, &iam.GetPolicyInput{PolicyArn: arn})
	iamWantErr(t, err, "NoSuchEntity", 404)

	// AWS-managed policies are read-only.
	_, err = c.CreatePolicyVersion(ctx, &iam.CreatePolicyVersionInput{PolicyArn: aws.String("arn:aws:iam::aws:policy/ReadOnlyAccess"), PolicyDocument: aws.String(doc(1))})
	iamWantErr(t, err, "InvalidInput", 400)
}

func TestIAMAttachLimit(t *testing.T) {
	_, _, cfg := iamTestSim(t, iamTestWorld(), "AKIDSIM")
	c := iam.NewFromConfig(cfg)
	ctx := context.Background()
	for i := range maxAttached + 1 {
		_, err := c.AttachRolePolicy(ctx, &iam.AttachRolePolicyInput{RoleName: aws.String("idle"), PolicyArn: aws.String(fmt.Sprintf("arn:aws:iam::aws:policy/P%d", i))})
		if i < maxAttached && err != nil {
			t.Fatalf("attach %d: %v", i, err)
		}
		if i == maxAttached {
			iamWantErr(t, err, "LimitExceeded", 409)
		}
	}
	out, err := c.ListPolicies(ctx, &iam.ListPoliciesInput{Scope: types.PolicyScopeTypeAws, OnlyAttached: true})
	if err != nil || len(out.Policies) != maxAttached+1 { // P0…P9 and AdministratorAccess
		t.Errorf("attached AWS policies: %d, %v", len(out.Policies), err)
	}
}
