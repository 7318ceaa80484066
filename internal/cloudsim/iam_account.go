package cloudsim

import (
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Account-level IAM reads: virtual MFA devices (across users and the root user), SAML
// providers, the account alias.

// mfaDev is one MFA device as IAM lists it.
type mfaDev struct {
	serial  string
	virtual bool
	enabled time.Time
}

// hardwareSerial is a made-up serial of a TOTP token, as AWS prints them (GAHT…).
func hardwareSerial(seed string) string { return makeID("GAHT", seed, 8) }

// userMFA is the user's MFA devices: MFADevices, else the one virtual device MFA stands for.
func userMFA(acct string, u *User) []mfaDev {
	if len(u.MFADevices) == 0 {
		if !u.MFA {
			return nil
		}
		return []mfaDev{{serial: mfaSerial(acct, u.Name), virtual: true, enabled: u.Created}}
	}
	out := make([]mfaDev, 0, len(u.MFADevices))
	for i, d := range u.MFADevices {
		out = append(out, deviceOf(acct, u.Name, i, d, u.Created))
	}
	return out
}

// deviceOf fills in what a world leaves out of a device: its serial and enable date.
func deviceOf(acct, owner string, i int, d *MFADevice, created time.Time) mfaDev {
	dev := mfaDev{serial: d.Serial, virtual: d.Type != "hardware", enabled: d.Enabled}
	if dev.enabled.IsZero() {
		dev.enabled = created
	}
	if dev.serial == "" {
		suffix := ""
		if i > 0 {
			suffix = fmt.Sprintf("-%d", i+1)
		}
		if dev.virtual {
			dev.serial = mfaSerial(acct, owner+suffix)
		} else {
			dev.serial = hardwareSerial(acct + "/" + owner + suffix)
		}
	}
	return dev
}

// hasMFA reports whether the user has any MFA device (the credential report's mfa_active).
func hasMFA(u *User) bool { return u.MFA || len(u.MFADevices) > 0 }

// rootMFA is the root user's MFA device, if MFA is on: virtual unless MFAType says hardware.
func rootMFA(a *Account) []mfaDev {
	if !a.Root.MFA {
		return nil
	}
	if a.Root.MFAType == "hardware" {
		return []mfaDev{{serial: hardwareSerial(a.ID + "/root"), enabled: a.Root.Created}}
	}
	return []mfaDev{{serial: mfaSerial(a.ID, "root-account-mfa-device"), virtual: true, enabled: a.Root.Created}}
}

// validateMFA checks an account's MFA devices: known types, serials unique in the account.
func validateMFA(a *Account) error {
	if t := a.Root.MFAType; t != "" && t != "virtual" && t != "hardware" {
		return fmt.Errorf("root.mfa_type: %q is not virtual or hardware", t)
	}
	seen := map[string]bool{}
	for _, d := range rootMFA(a) {
		seen[d.serial] = true
	}
	for j, u := range a.Users {
		if len(u.MFADevices) > 8 {
			return fmt.Errorf("users[%d] (%s).mfa_devices: %d devices, IAM allows 8", j, u.Name, len(u.MFADevices))
		}
		for k, d := range u.MFADevices {
			if d.Type != "" && d.Type != "virtual" && d.Type != "hardware" {
				return fmt.Errorf("users[%d] (%s).mfa_devices[%d].type: %q is not virtual or hardware", j, u.Name, k, d.Type)
			}
		}
		for _, d := range userMFA(a.ID, u) {
			if seen[d.serial] {
				return fmt.Errorf("users[%d] (%s).mfa_devices: serial %s is used twice", j, u.Name, d.serial)
			}
			seen[d.serial] = true
		}
	}
	for j, s := range a.UnassignedMFADevices {
		if !strings.HasPrefix(s, "arn:aws:iam::"+a.ID+":mfa/") {
			return fmt.Errorf("unassigned_mfa_devices[%d]: %q is not arn:aws:iam::%s:mfa/NAME", j, s, a.ID)
		}
		if seen[s] {
			return fmt.Errorf("unassigned_mfa_devices[%d]: serial %s is used twice", j, s)
		}
		seen[s] = true
	}
	for j, p := range a.SAMLProviders {
		if p.Name == "" {
			return fmt.Errorf("saml_providers[%d]: name is required", j)
		}
	}
	return nil
}

// xVirtualMFADevice is a virtual MFA device as ListVirtualMFADevices answers it; an
// unassigned device has neither User nor EnableDate.
type xVirtualMFADevice struct {
	SerialNumber string
	User         *xUser
	EnableDate   *awsTime
}

// listVirtualMFADevices answers ListVirtualMFADevices: every virtual device of the
// account, the root's included, filtered by AssignmentStatus (Assigned, Unassigned or
// Any, the default) and paged with Marker and MaxItems.
func (s *Sim) listVirtualMFADevices(a *Account, _ *call, f url.Values) (any, error) {
	status := f.Get("AssignmentStatus")
	switch status {
	case "", "Any", "Assigned", "Unassigned":
	default:
		return nil, iamInvalid("1 validation error detected: Value '%s' at 'assignmentStatus' failed to satisfy constraint: Member must satisfy enum value set: [Unassigned, Any, Assigned]", status)
	}
	assigned, unassigned := status != "Unassigned", status != "Assigned"
	var devs []xVirtualMFADevice
	if assigned {
		for _, d := range rootMFA(a) {
			if d.virtual {
				devs = append(devs, xVirtualMFADevice{SerialNumber: d.serial, EnableDate: optTime(&d.enabled),
					User: &xUser{Arn: rootARN(a.ID), CreateDate: awsTime(a.Root.Created), PasswordLastUsed: optTime(a.Root.PasswordLastUsed), UserId: a.ID}})
			}
		}
		for _, u := range a.Users {
			for _, d := range userMFA(a.ID, u) {
				if d.virtual {
					x := xmlUser(a.ID, u, false)
					devs = append(devs, xVirtualMFADevice{SerialNumber: d.serial, EnableDate: optTime(&d.enabled), User: &x})
				}
			}
		}
	}
	if unassigned {
		for _, serial := range a.UnassignedMFADevices {
			devs = append(devs, xVirtualMFADevice{SerialNumber: serial})
		}
	}
	page, pg, err := iamPaginate(f, devs)
	if err != nil {
		return nil, err
	}
	return struct {
		VirtualMFADevices []xVirtualMFADevice `xml:"VirtualMFADevices>member"`
		iamPage
	}{page, pg}, nil
}

// samlProviderARN is the ARN of a SAML provider.
func samlProviderARN(acct, name string) string {
	return "arn:aws:iam::" + acct + ":saml-provider/" + name
}

// listSAMLProviders answers ListSAMLProviders, which IAM does not page.
func (s *Sim) listSAMLProviders(a *Account, _ *call, _ url.Values) (any, error) {
	type xProvider struct {
		Arn        string
		ValidUntil awsTime
		CreateDate awsTime
	}
	out := struct {
		SAMLProviderList []xProvider `xml:"SAMLProviderList>member"`
	}{SAMLProviderList: []xProvider{}}
	for _, p := range a.SAMLProviders {
		created := p.Created
		if created.IsZero() {
			created = a.Root.Created
		}
		until := p.ValidUntil
		if until.IsZero() {
			until = created.AddDate(1, 0, 0)
		}
		out.SAMLProviderList = append(out.SAMLProviderList, xProvider{samlProviderARN(a.ID, p.Name), awsTime(until), awsTime(created)})
	}
	return out, nil
}

// listAccountAliases answers ListAccountAliases: the alias, if any (an account has at
// most one), paged as IAM lists are.
func (s *Sim) listAccountAliases(a *Account, _ *call, f url.Values) (any, error) {
	var aliases []string
	if a.Alias != "" {
		aliases = []string{a.Alias}
	}
	page, pg, err := iamPaginate(f, aliases)
	if err != nil {
		return nil, err
	}
	return struct {
		AccountAliases []string `xml:"AccountAliases>member"`
		iamPage
	}{page, pg}, nil
}
