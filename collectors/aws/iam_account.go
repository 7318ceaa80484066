package aws

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"golang.org/x/sync/errgroup"

	"github.com/warden-sec/warden/snapshot"
)

// The account-level IAM view (aws.iam.account) and the MFA devices of users and root.
// One ListVirtualMFADevices per account lists every assigned virtual device with its
// user; hardware devices (TOTP tokens, FIDO keys) only ListMFADevices shows, one user at
// a time. It is asked of the users the credential report shows with MFA but no virtual
// device (they hold hardware), and of every user with MFA when the account summary's
// MFADevicesInUse says devices are still unaccounted for.

// AWS-managed policies whose holders the account view lists (the name after
// arn:PARTITION:iam::aws:policy/).
const (
	supportPolicy       = "AWSSupportAccess"
	securityAuditPolicy = "SecurityAudit"
)

// awsPolicyARN is the ARN of an AWS-managed policy in the partition.
func awsPolicyARN(partition, name string) string {
	return "arn:" + partition + ":iam::aws:policy/" + name
}

// accountUID is the uid of an account's IAM view.
func accountUID(partition, acct string) string {
	return "arn:" + partition + ":iam::" + acct + ":account"
}

// rootUID is the uid of an account's root user.
func rootUID(partition, acct string) string { return "arn:" + partition + ":iam::" + acct + ":root" }

// virtualMFA is what ListVirtualMFADevices says: the serials of the assigned virtual
// devices, each user's (by name), and whether one of them is the root user's.
type virtualMFA struct {
	serials  map[string]bool
	byUser   map[string][]any
	assigned int
	root     bool
}

// virtualMFADevices lists the account's assigned virtual MFA devices, all pages.
func virtualMFADevices(ctx context.Context, cl *iam.Client, rootARN string) (*virtualMFA, error) {
	v := &virtualMFA{serials: map[string]bool{}, byUser: map[string][]any{}}
	p := iam.NewListVirtualMFADevicesPaginator(cl, &iam.ListVirtualMFADevicesInput{
		AssignmentStatus: iamtypes.AssignmentStatusTypeAssigned, MaxItems: aws.Int32(1000),
	})
	for page, err := range pages(ctx, p) {
		if err != nil {
			return nil, err
		}
		for _, d := range page.VirtualMFADevices {
			serial := aws.ToString(d.SerialNumber)
			v.serials[serial] = true
			switch {
			case d.User == nil: // not assigned after all
				continue
			case aws.ToString(d.User.Arn) == rootARN:
				v.root = true
			case d.User.UserName != nil:
				name := aws.ToString(d.User.UserName)
				v.byUser[name] = append(v.byUser[name], mfaDevice(serial, "virtual", d.EnableDate))
			}
			v.assigned++
		}
	}
	return v, nil
}

// userMFADevices lists one user's MFA devices in the model's shape: each virtual when
// ListVirtualMFADevices lists its serial, else hardware (a TOTP token or a FIDO key).
func userMFADevices(ctx context.Context, cl *iam.Client, user string, virtual *virtualMFA) ([]any, error) {
	out := []any{}
	for page, err := range pages(ctx, iam.NewListMFADevicesPaginator(cl, &iam.ListMFADevicesInput{UserName: aws.String(user)})) {
		if err != nil {
			return nil, err
		}
		for _, d := range page.MFADevices {
			serial := aws.ToString(d.SerialNumber)
			typ := "hardware"
			if virtual.serials[serial] {
				typ = "virtual"
			}
			out = append(out, mfaDevice(serial, typ, d.EnableDate))
		}
	}
	sortDevices(out)
	return out, nil
}

// mfaDevice is one MFA device in the model's shape.
func mfaDevice(serial, typ string, enabled *time.Time) map[string]any {
	return map[string]any{"serial": serial, "type": typ, "enabled": ts(enabled)}
}

// sortDevices orders a user's devices by serial, however they were listed.
func sortDevices(devs []any) {
	slices.SortFunc(devs, func(a, b any) int {
		return strings.Compare(a.(map[string]any)["serial"].(string), b.(map[string]any)["serial"].(string))
	})
}

// hardwareCount is the number of hardware devices among devs.
func hardwareCount(devs []any) int {
	n := 0
	for _, d := range devs {
		if d.(map[string]any)["type"] == "hardware" {
			n++
		}
	}
	return n
}

// mfaDevices finds the MFA devices of the users. Without the virtual-device list to
// tell the kinds apart there are none (every user's is unknown). A user the credential
// report shows without MFA has none, without a call. A user with MFA and no virtual
// device holds hardware: ListMFADevices. A user with virtual devices may hold hardware
// ones too; unless the account summary's MFADevicesInUse equals the devices accounted
// for (the virtual ones, the hardware ones listed, the root's), every such user is asked
// as well. Without a report or a summary, every user (with MFA) is asked. A user whose
// list fails is left out (unknown) and the scope partial. rootHardware is whether the
// root's MFA device is a hardware one.
func (a *account) mfaDevices(ctx context.Context, cl *iam.Client, sc *scope, users []iamtypes.UserDetail,
	report map[string]map[string]string, sum *iam.GetAccountSummaryOutput, virtual *virtualMFA, rootHardware bool) map[string][]any {
	out := map[string][]any{}
	if virtual == nil {
		return out
	}
	var (
		mu       sync.Mutex
		hardware int
		maybe    []string // users with virtual devices, who may hold hardware ones too
	)
	list := func(names []string) {
		var g errgroup.Group
		g.SetLimit(4)
		for _, name := range names {
			g.Go(func() error {
				devs, err := userMFADevices(ctx, cl, name, virtual)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					sc.partial("iam:ListMFADevices "+name, err)
					delete(out, name)
					return nil
				}
				out[name] = devs
				hardware += hardwareCount(devs)
				return nil
			})
		}
		_ = g.Wait()
	}
	var ask []string
	for _, u := range users {
		name := aws.ToString(u.UserName)
		row := report[name]
		switch {
		case row != nil && len(virtual.byUser[name]) > 0:
			// Before the report's "no MFA": the list is fresh, the report up to 4 hours old.
			devs := slices.Clone(virtual.byUser[name])
			sortDevices(devs)
			out[name] = devs
			maybe = append(maybe, name)
		case row != nil && row["mfa_active"] == "false":
			out[name] = []any{}
		default:
			ask = append(ask, name)
		}
	}
	list(ask)
	inUse, ok := int32(0), false
	if sum != nil {
		inUse, ok = sum.SummaryMap["MFADevicesInUse"]
	}
	if rootHardware {
		hardware++
	}
	if len(maybe) > 0 && (!ok || int(inUse) != virtual.assigned+hardware) {
		list(maybe)
	}
	return out
}

// samlProviders lists the ARNs of the account's SAML identity providers (IAM does not
// page them).
func samlProviders(ctx context.Context, cl *iam.Client) ([]string, error) {
	out, err := cl.ListSAMLProviders(ctx, &iam.ListSAMLProvidersInput{})
	if err != nil {
		return nil, err
	}
	arns := []string{}
	for _, p := range out.SAMLProviderList {
		arns = append(arns, aws.ToString(p.Arn))
	}
	slices.Sort(arns)
	return arns, nil
}

// accountAlias reads the account's alias: "" when it has none.
func accountAlias(ctx context.Context, cl *iam.Client) (string, error) {
	for page, err := range pages(ctx, iam.NewListAccountAliasesPaginator(cl, &iam.ListAccountAliasesInput{})) {
		if err != nil {
			return "", err
		}
		if len(page.AccountAliases) > 0 {
			return page.AccountAliases[0], nil
		}
	}
	return "", nil
}

// accountFacts is what the aws.iam.account resource is made of; nil saml and alias are
// unknown (their call failed).
type accountFacts struct {
	partition, id  string
	support, audit []string
	saml           []string
	alias          *string
}

func accountResource(f accountFacts) snapshot.Resource {
	support, audit := slices.Clone(f.support), slices.Clone(f.audit)
	slices.Sort(support)
	slices.Sort(audit)
	attrs := map[string]any{"support_roles": strs(support), "security_audit_roles": strs(audit)}
	name := f.id
	if f.saml != nil {
		attrs["saml_providers"] = strs(f.saml)
	}
	if f.alias != nil {
		attrs["alias"] = *f.alias
		if *f.alias != "" {
			name = *f.alias
		}
	}
	return snapshot.Resource{UID: accountUID(f.partition, f.id), Type: "aws.iam.account", Name: name, Attributes: attrs}
}

// rolesWith is the names of the roles that attach the policy, from the bulk read.
func rolesWith(roles []iamtypes.RoleDetail, policyARN string) []string {
	out := []string{}
	for _, r := range roles {
		if slices.ContainsFunc(r.AttachedManagedPolicies, func(p iamtypes.AttachedPolicy) bool { return aws.ToString(p.PolicyArn) == policyARN }) {
			out = append(out, aws.ToString(r.RoleName))
		}
	}
	return out
}

// rootMFAKind sets the root's virtual_mfa: known only when MFA is on and the
// virtual-device list was read.
func rootMFAKind(attrs map[string]any, virtual *virtualMFA) {
	if virtual != nil && attrs["mfa_active"] == true {
		attrs["virtual_mfa"] = virtual.root
	}
}

// rootKeysLastUsed is the latest use of either root access key in the report row, or
// nil when neither was ever used.
func rootKeysLastUsed(row map[string]string) any {
	var latest string
	for _, k := range []string{"access_key_1_last_used_date", "access_key_2_last_used_date"} {
		if t, ok := reportTime(row[k]).(string); ok && t > latest {
			latest = t
		}
	}
	if latest == "" {
		return nil
	}
	return latest
}

// rootKeys lists the root user's access keys from its credential report row, as users'
// access_keys are listed but for the id, which no API gives without root's own
// credentials: each key the report shows (access_key_N_last_rotated, its creation, is a
// time) as {slot (1 or 2), status, created, last_used (absent: never used)}, so that the
// age and the use of root's keys are judged as users' are.
func rootKeys(row map[string]string) []any {
	keys := []any{}
	for _, n := range []string{"1", "2"} {
		created := reportTime(row["access_key_"+n+"_last_rotated"])
		if created == nil {
			continue
		}
		status := "Inactive"
		if row["access_key_"+n+"_active"] == "true" {
			status = "Active"
		}
		key := map[string]any{"slot": n, "status": status, "created": created}
		if used := reportTime(row["access_key_"+n+"_last_used_date"]); used != nil {
			key["last_used"] = used
		}
		keys = append(keys, key)
	}
	return keys
}

// iamAccountPermissions are the IAM actions of this file's reads: MFA devices, SAML
// providers and the account alias.
func iamAccountPermissions() []string {
	return []string{"iam:ListAccountAliases", "iam:ListMFADevices", "iam:ListSAMLProviders", "iam:ListVirtualMFADevices"}
}
