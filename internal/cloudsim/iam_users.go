package cloudsim

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
)

// IAM users and what hangs off them: access keys, login profiles, MFA devices, tags.

// xUser is a User as IAM answers it.
type xUser struct {
	Arn              string
	CreateDate       awsTime
	PasswordLastUsed *awsTime
	Path             string `xml:",omitempty"`
	Tags             *xTagList
	UserId           string
	UserName         string `xml:",omitempty"`
}

// xmlUser renders u; ListUsers and GetGroup leave tags out, as IAM does.
func xmlUser(acct string, u *User, tags bool) xUser {
	x := xUser{Arn: userARN(acct, u), CreateDate: awsTime(u.Created), PasswordLastUsed: optTime(u.PasswordLastUsed),
		Path: orPath(u.Path), UserId: u.ID, UserName: u.Name}
	if tags {
		x.Tags = xmlTagList(u.Tags)
	}
	return x
}

func (s *Sim) createUser(a *Account, _ *call, f url.Values) (any, error) {
	name, err := iamName(f, "UserName", 64)
	if err != nil {
		return nil, err
	}
	path, err := iamPath(f)
	if err != nil {
		return nil, err
	}
	tags, err := iamTagsOf(f)
	if err != nil {
		return nil, err
	}
	if findUser(a, name) != nil {
		return nil, alreadyExists("User with name %s already exists.", name)
	}
	u := &User{Name: name, Path: path, ID: makeID("AIDA", a.ID+"/user/"+name, 17), Created: s.stamp()}
	if err := iamAddTags(&u.Tags, tags); err != nil {
		return nil, err
	}
	a.Users = append(a.Users, u)
	return struct{ User xUser }{xmlUser(a.ID, u, true)}, nil
}

func (s *Sim) getUser(a *Account, c *call, f url.Values) (any, error) {
	u, root, err := userOrCaller(a, c, f)
	if err != nil {
		return nil, err
	}
	if root {
		return struct{ User xUser }{xUser{Arn: rootARN(a.ID), CreateDate: awsTime(a.Root.Created),
			PasswordLastUsed: optTime(a.Root.PasswordLastUsed), UserId: a.ID}}, nil
	}
	return struct{ User xUser }{xmlUser(a.ID, u, true)}, nil
}

func (s *Sim) listUsers(a *Account, _ *call, f url.Values) (any, error) {
	users, pg, err := iamListByPath(f, a.Users, func(u *User) string { return u.Path },
		func(u *User) xUser { return xmlUser(a.ID, u, false) })
	if err != nil {
		return nil, err
	}
	return struct {
		Users []xUser `xml:"Users>member"`
		iamPage
	}{users, pg}, nil
}

// deleteUser refuses, as IAM does, while anything still hangs off the user.
func (s *Sim) deleteUser(a *Account, _ *call, f url.Values) (any, error) {
	u, err := userNamed(a, f)
	if err != nil {
		return nil, err
	}
	switch {
	case u.PasswordEnabled:
		return nil, deleteConflict("Cannot delete entity, must delete login profile first.")
	case len(u.AccessKeys) > 0:
		return nil, deleteConflict("Cannot delete entity, must delete access keys first.")
	case hasMFA(u):
		return nil, deleteConflict("Cannot delete entity, must delete MFA device first.")
	case len(u.Groups) > 0:
		return nil, deleteConflict("Cannot delete entity, must remove users from group first.")
	case len(u.InlinePolicies) > 0:
		return nil, deleteConflict("Cannot delete entity, must delete policies first.")
	case len(u.AttachedPolicies) > 0:
		return nil, deleteConflict("Cannot delete entity, must detach all policies first.")
	}
	a.Users = slices.DeleteFunc(a.Users, func(x *User) bool { return x == u })
	return nil, nil
}

// Tags: users and roles take them alike (groups take none), so one handler of each
// action serves both kinds.

// tagEntity answers Tag{User,Role}.
func tagEntity(k iamKind) iamHandler {
	return func(a *Account, _ *call, f url.Values) (any, error) {
		h, err := holderNamed(a, k, f)
		if err != nil {
			return nil, err
		}
		tags, err := iamTagsOf(f)
		if err != nil {
			return nil, err
		}
		return nil, iamAddTags(h.Tags, tags)
	}
}

// untagEntity answers Untag{User,Role}.
func untagEntity(k iamKind) iamHandler {
	return func(a *Account, _ *call, f url.Values) (any, error) {
		h, err := holderNamed(a, k, f)
		if err != nil {
			return nil, err
		}
		iamRemoveTags(h.Tags, f)
		return nil, nil
	}
}

// listEntityTags answers List{User,Role}Tags.
func listEntityTags(k iamKind) iamHandler {
	return func(a *Account, _ *call, f url.Values) (any, error) {
		h, err := holderNamed(a, k, f)
		if err != nil {
			return nil, err
		}
		page, pg, err := iamPaginate(f, xmlTags(*h.Tags))
		if err != nil {
			return nil, err
		}
		return struct {
			Tags []xTag `xml:"Tags>member"`
			iamPage
		}{page, pg}, nil
	}
}

func (s *Sim) listGroupsForUser(a *Account, _ *call, f url.Values) (any, error) {
	u, err := userNamed(a, f)
	if err != nil {
		return nil, err
	}
	var groups []*Group
	for _, n := range u.Groups {
		if g := findGroup(a, n); g != nil {
			groups = append(groups, g)
		}
	}
	page, pg, err := iamRenderPage(f, groups, func(g *Group) xGroup { return xmlGroup(a.ID, g) })
	if err != nil {
		return nil, err
	}
	return struct {
		Groups []xGroup `xml:"Groups>member"`
		iamPage
	}{page, pg}, nil
}

// Access keys. The root user's keys are only counted in the world (Root.AccessKeysActive);
// the simulator gives them stable ids so that they can be listed and deleted.

// xAccessKey is AccessKeyMetadata, and with a secret an AccessKey.
type xAccessKey struct {
	AccessKeyId     string
	CreateDate      awsTime
	SecretAccessKey string `xml:",omitempty"`
	Status          string
	UserName        string `xml:",omitempty"`
}

func rootKeyID(acct string, i int) string {
	return makeID("AKIA", acct+"/root/accesskey/"+strconv.Itoa(i), 16)
}

func (s *Sim) createAccessKey(a *Account, c *call, f url.Values) (any, error) {
	u, root, err := userOrCaller(a, c, f)
	if err != nil {
		return nil, err
	}
	if root {
		return nil, iamInvalid("The simulator does not create access keys for the root user.")
	}
	if len(u.AccessKeys) >= 2 {
		return nil, limitExceeded("Cannot exceed quota for AccessKeysPerUser: 2")
	}
	id := makeID("AKIA", fmt.Sprintf("%s/%s/accesskey/%d", a.ID, u.Name, s.nextID()), 16)
	k := &AccessKey{ID: id, Secret: makeID("", "secret/"+id, 40), Status: "Active", Created: s.stamp()}
	u.AccessKeys = append(u.AccessKeys, k)
	return struct{ AccessKey xAccessKey }{xAccessKey{AccessKeyId: k.ID, CreateDate: awsTime(k.Created),
		SecretAccessKey: k.Secret, Status: k.Status, UserName: u.Name}}, nil
}

func (s *Sim) listAccessKeys(a *Account, c *call, f url.Values) (any, error) {
	u, root, err := userOrCaller(a, c, f)
	if err != nil {
		return nil, err
	}
	var keys []xAccessKey
	if root {
		for i := range a.Root.AccessKeysActive {
			keys = append(keys, xAccessKey{AccessKeyId: rootKeyID(a.ID, i), CreateDate: awsTime(a.Root.Created), Status: "Active"})
		}
	} else {
		for _, k := range u.AccessKeys {
			keys = append(keys, xAccessKey{AccessKeyId: k.ID, CreateDate: awsTime(k.Created), Status: k.Status, UserName: u.Name})
		}
	}
	keys, pg, err := iamPaginate(f, keys)
	if err != nil {
		return nil, err
	}
	return struct {
		AccessKeyMetadata []xAccessKey `xml:"AccessKeyMetadata>member"`
		iamPage
	}{keys, pg}, nil
}

// accessKey finds the key AccessKeyId names: the named user's, else any user's in the
// account. rootIdx is the root key's index when the root user calls about its own key.
func accessKey(a *Account, c *call, f url.Values) (u *User, k *AccessKey, rootIdx int, err error) {
	id, err := iamRequired(f, "AccessKeyId")
	if err != nil {
		return nil, nil, -1, err
	}
	users := a.Users
	if f.Get("UserName") != "" {
		u, err := userNamed(a, f)
		if err != nil {
			return nil, nil, -1, err
		}
		users = []*User{u}
	} else if c.Principal == rootARN(a.ID) {
		for i := range a.Root.AccessKeysActive {
			if rootKeyID(a.ID, i) == id {
				return nil, nil, i, nil
			}
		}
	}
	for _, u := range users {
		for _, k := range u.AccessKeys {
			if k.ID == id {
				return u, k, -1, nil
			}
		}
	}
	return nil, nil, -1, noSuchEntity("The Access Key with id %s cannot be found.", id)
}

func (s *Sim) updateAccessKey(a *Account, c *call, f url.Values) (any, error) {
	status, err := iamRequired(f, "Status")
	if err != nil {
		return nil, err
	}
	if status != "Active" && status != "Inactive" {
		return nil, iamInvalid("1 validation error detected: Value '%s' at 'status' failed to satisfy constraint: Member must satisfy enum value set: [Active, Inactive]", status)
	}
	_, k, rootIdx, err := accessKey(a, c, f)
	if err != nil {
		return nil, err
	}
	if k == nil {
		// Only active root keys are modelled: deactivating one takes it out of the count.
		if status == "Inactive" && rootIdx >= 0 {
			a.Root.AccessKeysActive--
		}
		return nil, nil
	}
	k.Status = status
	return nil, nil
}

func (s *Sim) deleteAccessKey(a *Account, c *call, f url.Values) (any, error) {
	u, k, rootIdx, err := accessKey(a, c, f)
	if err != nil {
		return nil, err
	}
	if k == nil {
		if rootIdx >= 0 {
			a.Root.AccessKeysActive--
		}
		return nil, nil
	}
	u.AccessKeys = slices.DeleteFunc(u.AccessKeys, func(x *AccessKey) bool { return x == k })
	s.deletedKeys[k.ID] = true // refused from now on, as AWS refuses a deleted key
	return nil, nil
}

func (s *Sim) getAccessKeyLastUsed(a *Account, _ *call, f url.Values) (any, error) {
	id, err := iamRequired(f, "AccessKeyId")
	if err != nil {
		return nil, err
	}
	type lastUsed struct {
		LastUsedDate *awsTime
		Region       string
		ServiceName  string
	}
	for _, u := range a.Users {
		for _, k := range u.AccessKeys {
			if k.ID != id {
				continue
			}
			// IAM answers N/A for the region and service of a key never used.
			lu := lastUsed{LastUsedDate: optTime(k.LastUsed), Region: or(k.LastUsedRegion, "N/A"), ServiceName: or(k.LastUsedService, "N/A")}
			return struct {
				AccessKeyLastUsed lastUsed
				UserName          string
			}{lu, u.Name}, nil
		}
	}
	return nil, noSuchEntity("The Access Key with id %s cannot be found.", id)
}

// Login profiles: a user has a console password when PasswordEnabled.

type xLoginProfile struct {
	CreateDate            awsTime
	PasswordResetRequired bool
	UserName              string
}

func (s *Sim) createLoginProfile(a *Account, _ *call, f url.Values) (any, error) {
	u, err := userNamed(a, f)
	if err != nil {
		return nil, err
	}
	pw, err := iamRequired(f, "Password")
	if err != nil {
		return nil, err
	}
	reset, _, err := iamBool(f, "PasswordResetRequired")
	if err != nil {
		return nil, err
	}
	if u.PasswordEnabled {
		return nil, alreadyExists("Login Profile for user %s already exists.", u.Name)
	}
	if err := checkPassword(a.PasswordPolicy, pw); err != nil {
		return nil, err
	}
	now := s.stamp()
	u.PasswordEnabled, u.PasswordLastChanged = true, &now
	return struct{ LoginProfile xLoginProfile }{xLoginProfile{awsTime(now), reset, u.Name}}, nil
}

func (s *Sim) getLoginProfile(a *Account, _ *call, f url.Values) (any, error) {
	u, err := userNamed(a, f)
	if err != nil {
		return nil, err
	}
	if !u.PasswordEnabled {
		return nil, noSuchEntity("Login Profile for User %s cannot be found.", u.Name)
	}
	created := u.Created
	if u.PasswordLastChanged != nil {
		created = *u.PasswordLastChanged
	}
	return struct{ LoginProfile xLoginProfile }{xLoginProfile{CreateDate: awsTime(created), UserName: u.Name}}, nil
}

func (s *Sim) deleteLoginProfile(a *Account, _ *call, f url.Values) (any, error) {
	u, err := userNamed(a, f)
	if err != nil {
		return nil, err
	}
	if !u.PasswordEnabled {
		return nil, noSuchEntity("Login Profile for User %s cannot be found.", u.Name)
	}
	u.PasswordEnabled, u.PasswordLastChanged = false, nil
	return nil, nil
}

// MFA: a user's devices are its MFADevices, or one virtual device named after it when
// the world says only mfa: true (iam_account.go).

type xMFADevice struct {
	EnableDate   awsTime
	SerialNumber string
	UserName     string `xml:",omitempty"`
}

func mfaSerial(acct, user string) string { return "arn:aws:iam::" + acct + ":mfa/" + user }

// listMFADevices answers ListMFADevices: the devices of the named user, else of the
// caller (the root user's own, when the root calls), virtual and hardware alike.
func (s *Sim) listMFADevices(a *Account, c *call, f url.Values) (any, error) {
	u, root, err := userOrCaller(a, c, f)
	if err != nil {
		return nil, err
	}
	var devs []xMFADevice
	if root {
		for _, d := range rootMFA(a) {
			devs = append(devs, xMFADevice{EnableDate: awsTime(d.enabled), SerialNumber: d.serial})
		}
	} else {
		for _, d := range userMFA(a.ID, u) {
			devs = append(devs, xMFADevice{EnableDate: awsTime(d.enabled), SerialNumber: d.serial, UserName: u.Name})
		}
	}
	devs, pg, err := iamPaginate(f, devs)
	if err != nil {
		return nil, err
	}
	return struct {
		MFADevices []xMFADevice `xml:"MFADevices>member"`
		iamPage
	}{devs, pg}, nil
}

// deactivateMFADevice detaches one device from its user. A virtual device stays in the
// account, unassigned, as IAM keeps it until DeleteVirtualMFADevice.
func (s *Sim) deactivateMFADevice(a *Account, _ *call, f url.Values) (any, error) {
	u, err := userNamed(a, f)
	if err != nil {
		return nil, err
	}
	serial, err := iamRequired(f, "SerialNumber")
	if err != nil {
		return nil, err
	}
	devs := userMFA(a.ID, u)
	i := slices.IndexFunc(devs, func(d mfaDev) bool { return d.serial == serial })
	if i < 0 {
		return nil, noSuchEntity("MFA Device with serial number %s does not exist.", serial)
	}
	if len(u.MFADevices) > 0 {
		u.MFADevices = slices.Delete(u.MFADevices, i, i+1)
	}
	if len(u.MFADevices) == 0 {
		u.MFADevices = nil
		u.MFA = false
	}
	if devs[i].virtual {
		a.UnassignedMFADevices = append(a.UnassignedMFADevices, serial)
	}
	return nil, nil
}
