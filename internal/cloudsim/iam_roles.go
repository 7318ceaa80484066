package cloudsim

import (
	"net/url"
	"slices"
	"strings"
)

// IAM roles and groups.

// xRole is a Role as IAM answers it.
type xRole struct {
	Arn                      string
	AssumeRolePolicyDocument string
	CreateDate               awsTime
	Description              string `xml:",omitempty"`
	MaxSessionDuration       int    `xml:",omitempty"`
	Path                     string
	RoleId                   string
	RoleLastUsed             *xRoleLastUsed
	RoleName                 string
	Tags                     *xTagList
}

// xRoleLastUsed is empty (but present) for a role never used, as IAM writes it.
type xRoleLastUsed struct {
	LastUsedDate *awsTime
	Region       string `xml:",omitempty"`
}

func roleLastUsed(r *Role) *xRoleLastUsed {
	return &xRoleLastUsed{LastUsedDate: optTime(r.LastUsed), Region: r.LastUsedRegion}
}

// xmlRole renders r; ListRoles leaves out last use and tags, as IAM does (GetRole and
// GetAccountAuthorizationDetails have them).
func xmlRole(acct string, r *Role, full bool) xRole {
	x := xRole{Arn: roleARN(acct, r), AssumeRolePolicyDocument: encodeDoc(r.AssumeRolePolicy), CreateDate: awsTime(r.Created),
		Description: r.Description, MaxSessionDuration: r.MaxSessionDuration, Path: orPath(r.Path), RoleId: r.ID, RoleName: r.Name}
	if full {
		x.RoleLastUsed = roleLastUsed(r)
		x.Tags = xmlTagList(r.Tags)
	}
	return x
}

// roleNamed finds the role the RoleName parameter names.
func roleNamed(a *Account, f url.Values) (*Role, error) {
	return iamNamed(a, iamRoleKind, f, findRole)
}

func (s *Sim) createRole(a *Account, _ *call, f url.Values) (any, error) {
	name, err := iamName(f, "RoleName", 64)
	if err != nil {
		return nil, err
	}
	path, err := iamPath(f)
	if err != nil {
		return nil, err
	}
	doc, err := iamPolicyDoc(f, "AssumeRolePolicyDocument")
	if err != nil {
		return nil, err
	}
	maxSession, set, err := iamInt(f, "MaxSessionDuration", 3600, 43200)
	if err != nil {
		return nil, err
	}
	if !set {
		maxSession = 3600
	}
	desc := f.Get("Description")
	if len(desc) > 1000 {
		return nil, iamInvalid("1 validation error detected: Value at 'description' failed to satisfy constraint: Member must have length less than or equal to 1000")
	}
	tags, err := iamTagsOf(f)
	if err != nil {
		return nil, err
	}
	if findRole(a, name) != nil {
		return nil, alreadyExists("Role with name %s already exists.", name)
	}
	r := &Role{Name: name, Path: path, ID: makeID("AROA", a.ID+"/role/"+name, 17), Created: s.stamp(),
		Description: desc, AssumeRolePolicy: doc, MaxSessionDuration: maxSession}
	if err := iamAddTags(&r.Tags, tags); err != nil {
		return nil, err
	}
	a.Roles = append(a.Roles, r)
	x := xmlRole(a.ID, r, false)
	x.Tags = xmlTagList(r.Tags)
	return struct{ Role xRole }{x}, nil
}

func (s *Sim) getRole(a *Account, _ *call, f url.Values) (any, error) {
	r, err := roleNamed(a, f)
	if err != nil {
		return nil, err
	}
	return struct{ Role xRole }{xmlRole(a.ID, r, true)}, nil
}

func (s *Sim) listRoles(a *Account, _ *call, f url.Values) (any, error) {
	roles, pg, err := iamListByPath(f, a.Roles, func(r *Role) string { return r.Path },
		func(r *Role) xRole { return xmlRole(a.ID, r, false) })
	if err != nil {
		return nil, err
	}
	return struct {
		Roles []xRole `xml:"Roles>member"`
		iamPage
	}{roles, pg}, nil
}

func (s *Sim) deleteRole(a *Account, _ *call, f url.Values) (any, error) {
	r, err := roleNamed(a, f)
	if err != nil {
		return nil, err
	}
	switch {
	case len(r.InlinePolicies) > 0:
		return nil, deleteConflict("Cannot delete entity, must delete policies first.")
	case len(r.AttachedPolicies) > 0:
		return nil, deleteConflict("Cannot delete entity, must detach all policies first.")
	}
	a.Roles = slices.DeleteFunc(a.Roles, func(x *Role) bool { return x == r })
	return nil, nil
}

func (s *Sim) updateAssumeRolePolicy(a *Account, _ *call, f url.Values) (any, error) {
	r, err := roleNamed(a, f)
	if err != nil {
		return nil, err
	}
	doc, err := iamPolicyDoc(f, "PolicyDocument")
	if err != nil {
		return nil, err
	}
	r.AssumeRolePolicy = doc
	return nil, nil
}

// listInstanceProfilesForRole answers an empty list: the world has no instance profiles.
func (s *Sim) listInstanceProfilesForRole(a *Account, _ *call, f url.Values) (any, error) {
	if _, err := roleNamed(a, f); err != nil {
		return nil, err
	}
	_, pg, err := iamPaginate(f, []struct{}{})
	if err != nil {
		return nil, err
	}
	// The role has no instance profiles: the list is there, empty, as IAM answers it
	// (the model requires it).
	return struct {
		InstanceProfiles struct{}
		iamPage
	}{iamPage: pg}, nil
}

// Groups: membership is recorded on the users (User.Groups).

// xGroup is a Group as IAM answers it.
type xGroup struct {
	Arn        string
	CreateDate awsTime
	GroupId    string
	GroupName  string
	Path       string
}

func xmlGroup(acct string, g *Group) xGroup {
	return xGroup{Arn: groupARN(acct, g), CreateDate: awsTime(g.Created), GroupId: g.ID, GroupName: g.Name, Path: orPath(g.Path)}
}

// groupNamed finds the group the GroupName parameter names.
func groupNamed(a *Account, f url.Values) (*Group, error) {
	return iamNamed(a, iamGroupKind, f, findGroup)
}

// groupMembers lists the users in g, in world order.
func groupMembers(a *Account, g *Group) []*User {
	var out []*User
	for _, u := range a.Users {
		if inGroup(u, g.Name) {
			out = append(out, u)
		}
	}
	return out
}

func inGroup(u *User, group string) bool {
	return slices.ContainsFunc(u.Groups, func(n string) bool { return strings.EqualFold(n, group) })
}

func (s *Sim) createGroup(a *Account, _ *call, f url.Values) (any, error) {
	name, err := iamName(f, "GroupName", 128)
	if err != nil {
		return nil, err
	}
	path, err := iamPath(f)
	if err != nil {
		return nil, err
	}
	if findGroup(a, name) != nil {
		return nil, alreadyExists("Group with name %s already exists.", name)
	}
	g := &Group{Name: name, Path: path, ID: makeID("AGPA", a.ID+"/group/"+name, 17), Created: s.stamp()}
	a.Groups = append(a.Groups, g)
	return struct{ Group xGroup }{xmlGroup(a.ID, g)}, nil
}

func (s *Sim) getGroup(a *Account, _ *call, f url.Values) (any, error) {
	g, err := groupNamed(a, f)
	if err != nil {
		return nil, err
	}
	users, pg, err := iamRenderPage(f, groupMembers(a, g), func(u *User) xUser { return xmlUser(a.ID, u, false) })
	if err != nil {
		return nil, err
	}
	return struct {
		Group xGroup
		Users []xUser `xml:"Users>member"`
		iamPage
	}{xmlGroup(a.ID, g), users, pg}, nil
}

func (s *Sim) listGroups(a *Account, _ *call, f url.Values) (any, error) {
	groups, pg, err := iamListByPath(f, a.Groups, func(g *Group) string { return g.Path },
		func(g *Group) xGroup { return xmlGroup(a.ID, g) })
	if err != nil {
		return nil, err
	}
	return struct {
		Groups []xGroup `xml:"Groups>member"`
		iamPage
	}{groups, pg}, nil
}

func (s *Sim) deleteGroup(a *Account, _ *call, f url.Values) (any, error) {
	g, err := groupNamed(a, f)
	if err != nil {
		return nil, err
	}
	switch {
	case len(groupMembers(a, g)) > 0:
		return nil, deleteConflict("Cannot delete entity, must remove users from group first.")
	case len(g.InlinePolicies) > 0:
		return nil, deleteConflict("Cannot delete entity, must delete policies first.")
	case len(g.AttachedPolicies) > 0:
		return nil, deleteConflict("Cannot delete entity, must detach all policies first.")
	}
	a.Groups = slices.DeleteFunc(a.Groups, func(x *Group) bool { return x == g })
	return nil, nil
}

func (s *Sim) addUserToGroup(a *Account, _ *call, f url.Values) (any, error) {
	g, err := groupNamed(a, f)
	if err != nil {
		return nil, err
	}
	u, err := userNamed(a, f)
	if err != nil {
		return nil, err
	}
	if inGroup(u, g.Name) {
		return nil, nil
	}
	if len(u.Groups) >= 10 {
		return nil, limitExceeded("Cannot exceed quota for GroupsPerUser: 10")
	}
	u.Groups = append(u.Groups, g.Name)
	return nil, nil
}

func (s *Sim) removeUserFromGroup(a *Account, _ *call, f url.Values) (any, error) {
	g, err := groupNamed(a, f)
	if err != nil {
		return nil, err
	}
	u, err := userNamed(a, f)
	if err != nil {
		return nil, err
	}
	u.Groups = slices.DeleteFunc(u.Groups, func(n string) bool { return strings.EqualFold(n, g.Name) })
	if len(u.Groups) == 0 {
		u.Groups = nil
	}
	return nil, nil
}
