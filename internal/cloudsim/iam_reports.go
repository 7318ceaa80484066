package cloudsim

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/csv"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Account-wide IAM reads: GetAccountAuthorizationDetails, the credential report, the
// account summary and the password policy.

type xUserDetail struct {
	Arn                     string
	AttachedManagedPolicies []xAttached `xml:"AttachedManagedPolicies>member"`
	CreateDate              awsTime
	GroupList               []string `xml:"GroupList>member"`
	Path                    string
	Tags                    *xTagList
	UserId                  string
	UserName                string
	UserPolicyList          []xInline `xml:"UserPolicyList>member"`
}

type xGroupDetail struct {
	Arn                     string
	AttachedManagedPolicies []xAttached `xml:"AttachedManagedPolicies>member"`
	CreateDate              awsTime
	GroupId                 string
	GroupName               string
	GroupPolicyList         []xInline `xml:"GroupPolicyList>member"`
	Path                    string
}

// xRoleDetail has no InstanceProfileList: the world has no instance profiles.
type xRoleDetail struct {
	Arn                      string
	AssumeRolePolicyDocument string
	AttachedManagedPolicies  []xAttached `xml:"AttachedManagedPolicies>member"`
	CreateDate               awsTime
	Path                     string
	RoleId                   string
	RoleLastUsed             *xRoleLastUsed
	RoleName                 string
	RolePolicyList           []xInline `xml:"RolePolicyList>member"`
	Tags                     *xTagList
}

type xPolicyDetail struct {
	xPolicy
	PolicyVersionList []xPolicyVersion `xml:"PolicyVersionList>member"`
}

// gaadFilters are the entity types GetAccountAuthorizationDetails can be asked for.
var gaadFilters = []string{"User", "Group", "Role", "LocalManagedPolicy", "AWSManagedPolicy"}

func (s *Sim) getAccountAuthorizationDetails(a *Account, _ *call, f url.Values) (any, error) {
	want := map[string]bool{}
	for _, v := range iamMembers(f, "Filter") {
		if !slices.Contains(gaadFilters, v) {
			return nil, iamInvalid("1 validation error detected: Value '[%s]' at 'filter' failed to satisfy constraint: Member must satisfy constraint: [Member must satisfy enum value set: [%s]]", v, strings.Join(gaadFilters, ", "))
		}
		want[v] = true
	}
	all := len(want) == 0
	s.adoptAWSPolicies(a)
	counts, names := attachmentCounts(a), policyNames(a)
	groupNames := make(map[string]string, len(a.Groups)) // lower-cased → as created
	for _, g := range a.Groups {
		groupNames[strings.ToLower(g.Name)] = g.Name
	}

	// One sequence over every entity the filter selects, paginated as a whole: users,
	// groups, roles, then policies, in the order IAM answers them.
	type item struct {
		kind string
		i    int
	}
	var items []item
	add := func(kind string, n int, keep func(int) bool) {
		if !all && !want[kind] {
			return
		}
		for i := range n {
			if keep == nil || keep(i) {
				items = append(items, item{kind, i})
			}
		}
	}
	add("User", len(a.Users), nil)
	add("Group", len(a.Groups), nil)
	add("Role", len(a.Roles), nil)
	add("LocalManagedPolicy", len(a.Policies), func(i int) bool { return !a.Policies[i].AWSManaged })
	// Like IAM, only the AWS-managed policies in use are listed.
	add("AWSManagedPolicy", len(a.Policies), func(i int) bool { return a.Policies[i].AWSManaged && counts[a.Policies[i].ARN] > 0 })
	page, pg, err := iamPaginate(f, items)
	if err != nil {
		return nil, err
	}

	out := struct {
		UserDetailList  []xUserDetail   `xml:"UserDetailList>member"`
		GroupDetailList []xGroupDetail  `xml:"GroupDetailList>member"`
		RoleDetailList  []xRoleDetail   `xml:"RoleDetailList>member"`
		Policies        []xPolicyDetail `xml:"Policies>member"`
		iamPage
	}{iamPage: pg}
	for _, it := range page {
		switch it.kind {
		case "User":
			u := a.Users[it.i]
			var groups []string
			for _, n := range u.Groups {
				if g, ok := groupNames[strings.ToLower(n)]; ok {
					groups = append(groups, g)
				}
			}
			out.UserDetailList = append(out.UserDetailList, xUserDetail{Arn: userARN(a.ID, u),
				AttachedManagedPolicies: attachedList(names, u.AttachedPolicies), CreateDate: awsTime(u.Created), GroupList: groups,
				Path: orPath(u.Path), Tags: xmlTagList(u.Tags), UserId: u.ID, UserName: u.Name, UserPolicyList: inlineList(u.InlinePolicies)})
		case "Group":
			g := a.Groups[it.i]
			out.GroupDetailList = append(out.GroupDetailList, xGroupDetail{Arn: groupARN(a.ID, g),
				AttachedManagedPolicies: attachedList(names, g.AttachedPolicies), CreateDate: awsTime(g.Created), GroupId: g.ID,
				GroupName: g.Name, GroupPolicyList: inlineList(g.InlinePolicies), Path: orPath(g.Path)})
		case "Role":
			r := a.Roles[it.i]
			out.RoleDetailList = append(out.RoleDetailList, xRoleDetail{Arn: roleARN(a.ID, r),
				AssumeRolePolicyDocument: encodeDoc(r.AssumeRolePolicy), AttachedManagedPolicies: attachedList(names, r.AttachedPolicies),
				CreateDate: awsTime(r.Created), Path: orPath(r.Path), RoleId: r.ID, RoleLastUsed: roleLastUsed(r), RoleName: r.Name,
				RolePolicyList: inlineList(r.InlinePolicies), Tags: xmlTagList(r.Tags)})
		default:
			p := a.Policies[it.i]
			d := xPolicyDetail{xPolicy: xmlPolicy(p, counts[p.ARN], true)}
			for _, v := range p.Versions {
				d.PolicyVersionList = append(d.PolicyVersionList, xmlVersion(p, v, true))
			}
			out.Policies = append(out.Policies, d)
		}
	}
	return out, nil
}

// credentialReport is an account's last generated credential report.
type credentialReport struct {
	generated time.Time
	content   []byte
	sum       [sha256.Size]byte // of the content, kept for generated accounts too
	// global and version are the answer cache's versions (when the simulator keeps
	// answers) the report was rendered at: a generated account unchanged since renders
	// the same report, so generating it again need not render it.
	global, version uint64
}

// credentialReportHeader is the header row of IAM's credential report, exactly.
var credentialReportHeader = []string{"user", "arn", "user_creation_time", "password_enabled", "password_last_used",
	"password_last_changed", "password_next_rotation", "mfa_active",
	"access_key_1_active", "access_key_1_last_rotated", "access_key_1_last_used_date", "access_key_1_last_used_region", "access_key_1_last_used_service",
	"access_key_2_active", "access_key_2_last_rotated", "access_key_2_last_used_date", "access_key_2_last_used_region", "access_key_2_last_used_service",
	"cert_1_active", "cert_1_last_rotated", "cert_2_active", "cert_2_last_rotated"}

// generateCredentialReport renders the report from the account as it is now and answers
// COMPLETE at once: IAM may answer STARTED first, but clients then wait before polling
// again, which would only slow tests and benchmarks down (a fault with latency on
// GenerateCredentialReport simulates a slow report). Unlike IAM, which reuses a report for
// four hours, every request renders a fresh one, so that tests see the writes they made;
// but a report whose content is the last one's keeps its generation time, as IAM's
// reused report does, so that an unchanged account answers alike.
func (s *Sim) generateCredentialReport(reports map[string]*credentialReport, a *Account) any {
	last, ok := reports[a.ID]
	kept := s.answers != nil && s.gen.owns(a.ID)
	if ok && kept && last.global == s.answers.global && last.version == s.answers.versions[a.ID] {
		return struct{ State string }{"COMPLETE"} // nothing it reports changed since
	}
	content := renderCredentialReport(a)
	r := &credentialReport{generated: s.stamp(), content: content, sum: sha256.Sum256(content)}
	switch {
	case ok && last.sum == r.sum:
		r.generated = last.generated
	case ok && kept:
		// GetCredentialReport answers the new report. (Before the first report it
		// answered an error, which is not kept.)
		s.answers.changed(a.ID)
	}
	if kept {
		r.global, r.version = s.answers.global, s.answers.versions[a.ID]
	}
	if s.gen.owns(a.ID) {
		// Thousands of generated accounts would each keep their report: render it again
		// when it is read instead (a generated account changes only by writes and drift).
		r.content = nil
	}
	reports[a.ID] = r
	return struct{ State string }{"COMPLETE"}
}

func getCredentialReport(reports map[string]*credentialReport, a *Account) (any, error) {
	r, ok := reports[a.ID]
	if !ok {
		e := errf(kindNotFound, "ReportNotPresent", "Credential report not present. Use GenerateCredentialReport to generate a report.")
		e.Status = 410
		return nil, e
	}
	content := r.content
	if content == nil {
		content = renderCredentialReport(a)
	}
	return struct {
		Content       string
		GeneratedTime awsTime
		ReportFormat  string
	}{base64.StdEncoding.EncodeToString(content), awsTime(r.generated), "text/csv"}, nil
}

// reportTime is a time as the credential report writes it.
func reportTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05+00:00") }

// reportTimeOr writes t, or none when t never happened.
func reportTimeOr(t *time.Time, none string) string {
	if t == nil || t.IsZero() {
		return none
	}
	return reportTime(*t)
}

func renderCredentialReport(a *Account) []byte {
	var b bytes.Buffer
	b.Grow(256 * (len(a.Users) + 2)) // a row is about 200 bytes: grown once, not doubled ten times
	w := csv.NewWriter(&b)
	_ = w.Write(credentialReportHeader)
	root := []string{"<root_account>", rootARN(a.ID), reportTime(a.Root.Created), "not_supported",
		reportTimeOr(a.Root.PasswordLastUsed, "no_information"), "not_supported", "not_supported", strconv.FormatBool(a.Root.MFA)}
	created := []*time.Time{a.Root.AccessKey1Created, a.Root.AccessKey2Created}
	for i, used := range []*time.Time{a.Root.AccessKey1LastUsed, a.Root.AccessKey2LastUsed} {
		if i < a.Root.AccessKeysActive {
			// The service and region of a root key's use are not simulated.
			region, service := "N/A", "N/A"
			if used != nil && !used.IsZero() {
				region, service = "us-east-1", "iam"
			}
			root = append(root, "true", reportTimeOr(created[i], reportTime(a.Root.Created)), reportTimeOr(used, "N/A"), region, service)
		} else {
			root = append(root, "false", "N/A", "N/A", "N/A", "N/A")
		}
	}
	_ = w.Write(append(root, "false", "N/A", "false", "N/A"))
	for _, u := range a.Users {
		row := []string{u.Name, userARN(a.ID, u), reportTime(u.Created), strconv.FormatBool(u.PasswordEnabled)}
		if u.PasswordEnabled {
			changed := u.Created
			if u.PasswordLastChanged != nil {
				changed = *u.PasswordLastChanged
			}
			next := "N/A"
			if pp := a.PasswordPolicy; pp != nil && pp.MaxPasswordAge > 0 {
				next = reportTime(changed.AddDate(0, 0, pp.MaxPasswordAge))
			}
			row = append(row, reportTimeOr(u.PasswordLastUsed, "no_information"), reportTime(changed), next)
		} else {
			row = append(row, "N/A", "N/A", "N/A")
		}
		row = append(row, strconv.FormatBool(hasMFA(u)))
		for i := range 2 {
			if i >= len(u.AccessKeys) {
				row = append(row, "false", "N/A", "N/A", "N/A", "N/A")
				continue
			}
			k := u.AccessKeys[i]
			region, service := "N/A", "N/A"
			if k.LastUsed != nil {
				region, service = or(k.LastUsedRegion, "N/A"), or(k.LastUsedService, "N/A")
			}
			row = append(row, strconv.FormatBool(k.Status != "Inactive"), reportTime(k.Created),
				reportTimeOr(k.LastUsed, "N/A"), region, service)
		}
		_ = w.Write(append(row, "false", "N/A", "false", "N/A"))
	}
	w.Flush()
	return b.Bytes()
}

func (s *Sim) getAccountSummary(a *Account, _ *call, _ url.Values) (any, error) {
	b2i := func(b bool) int {
		if b {
			return 1
		}
		return 0
	}
	local, versions, mfa := 0, 0, b2i(a.Root.MFA)
	counts := attachmentCounts(a)
	for _, p := range a.Policies {
		if !p.AWSManaged {
			local++
			if counts[p.ARN] > 0 {
				versions += len(p.Versions)
			}
		}
	}
	inUse := mfa
	for _, u := range a.Users {
		n := len(userMFA(a.ID, u))
		mfa += n
		inUse += n
	}
	mfa += len(a.UnassignedMFADevices)
	m := map[string]int{
		"AccessKeysPerUserQuota":            2,
		"AccountAccessKeysPresent":          b2i(a.Root.AccessKeysActive > 0),
		"AccountMFAEnabled":                 b2i(a.Root.MFA),
		"AccountSigningCertificatesPresent": 0,
		"AssumeRolePolicySizeQuota":         2048,
		"AttachedPoliciesPerGroupQuota":     maxAttached,
		"AttachedPoliciesPerRoleQuota":      maxAttached,
		"AttachedPoliciesPerUserQuota":      maxAttached,
		"GlobalEndpointTokenVersion":        1,
		"GroupPolicySizeQuota":              5120,
		"Groups":                            len(a.Groups),
		"GroupsPerUserQuota":                10,
		"GroupsQuota":                       300,
		"InstanceProfiles":                  0,
		"InstanceProfilesQuota":             1000,
		"MFADevices":                        mfa,
		"MFADevicesInUse":                   inUse,
		"Policies":                          local,
		"PoliciesQuota":                     1500,
		"PolicySizeQuota":                   6144,
		"PolicyVersionsInUse":               versions,
		"PolicyVersionsInUseQuota":          10000,
		"Providers":                         len(a.SAMLProviders),
		"RolePolicySizeQuota":               10240,
		"Roles":                             len(a.Roles),
		"RolesQuota":                        1000,
		"ServerCertificates":                len(a.ServerCertificates),
		"ServerCertificatesQuota":           20,
		"SigningCertificatesPerUserQuota":   2,
		"UserPolicySizeQuota":               2048,
		"Users":                             len(a.Users),
		"UsersQuota":                        5000,
		"VersionsPerPolicyQuota":            maxPolicyVersions,
	}
	type entry struct {
		Key   string `xml:"key"`
		Value int    `xml:"value"`
	}
	out := struct {
		SummaryMap []entry `xml:"SummaryMap>entry"`
	}{}
	for k, v := range m {
		out.SummaryMap = append(out.SummaryMap, entry{k, v})
	}
	slices.SortFunc(out.SummaryMap, func(x, y entry) int { return strings.Compare(x.Key, y.Key) })
	return out, nil
}

// Password policy.

func (s *Sim) getAccountPasswordPolicy(a *Account, _ *call, _ url.Values) (any, error) {
	pp := a.PasswordPolicy
	if pp == nil {
		return nil, noSuchEntity("The Password Policy with domain name %s cannot be found.", a.ID)
	}
	type policy struct {
		AllowUsersToChangePassword bool
		ExpirePasswords            bool
		HardExpiry                 bool
		MaxPasswordAge             int `xml:",omitempty"`
		MinimumPasswordLength      int
		PasswordReusePrevention    int `xml:",omitempty"`
		RequireLowercaseCharacters bool
		RequireNumbers             bool
		RequireSymbols             bool
		RequireUppercaseCharacters bool
	}
	return struct{ PasswordPolicy policy }{policy{pp.AllowUsersToChangePassword, pp.MaxPasswordAge > 0, pp.HardExpiry,
		pp.MaxPasswordAge, pp.MinimumPasswordLength, pp.PasswordReusePrevention, pp.RequireLowercaseCharacters,
		pp.RequireNumbers, pp.RequireSymbols, pp.RequireUppercaseCharacters}}, nil
}

// updateAccountPasswordPolicy replaces the whole policy: parameters left out take their
// defaults, as IAM does.
func (s *Sim) updateAccountPasswordPolicy(a *Account, _ *call, f url.Values) (any, error) {
	var pp PasswordPolicy
	var err error
	ints := []struct {
		param  string
		dst    *int
		lo, hi int
		def    int
	}{
		{"MinimumPasswordLength", &pp.MinimumPasswordLength, 6, 128, 6},
		{"MaxPasswordAge", &pp.MaxPasswordAge, 1, 1095, 0},
		{"PasswordReusePrevention", &pp.PasswordReusePrevention, 1, 24, 0},
	}
	for _, p := range ints {
		var set bool
		if *p.dst, set, err = iamInt(f, p.param, p.lo, p.hi); err != nil {
			return nil, err
		}
		if !set {
			*p.dst = p.def
		}
	}
	bools := []struct {
		param string
		dst   *bool
	}{
		{"RequireSymbols", &pp.RequireSymbols}, {"RequireNumbers", &pp.RequireNumbers},
		{"RequireUppercaseCharacters", &pp.RequireUppercaseCharacters}, {"RequireLowercaseCharacters", &pp.RequireLowercaseCharacters},
		{"AllowUsersToChangePassword", &pp.AllowUsersToChangePassword}, {"HardExpiry", &pp.HardExpiry},
	}
	for _, p := range bools {
		if *p.dst, _, err = iamBool(f, p.param); err != nil {
			return nil, err
		}
	}
	a.PasswordPolicy = &pp
	return nil, nil
}

func (s *Sim) deleteAccountPasswordPolicy(a *Account, _ *call, _ url.Values) (any, error) {
	if a.PasswordPolicy == nil {
		return nil, noSuchEntity("The account policy with name PasswordPolicy cannot be found.")
	}
	a.PasswordPolicy = nil
	return nil, nil
}

// checkPassword applies the account's password policy, or IAM's default one (8
// characters, three of the four kinds) when the account has none.
func checkPassword(pp *PasswordPolicy, pw string) error {
	var upper, lower, digit, symbol bool
	for _, r := range pw {
		switch {
		case unicode.IsUpper(r):
			upper = true
		case unicode.IsLower(r):
			lower = true
		case unicode.IsDigit(r):
			digit = true
		default:
			symbol = true
		}
	}
	violation := func(msg string) error { return errf(kindInvalid, "PasswordPolicyViolation", "%s", msg) }
	if pp == nil {
		kinds := 0
		for _, b := range []bool{upper, lower, digit, symbol} {
			if b {
				kinds++
			}
		}
		if len(pw) < 8 || kinds < 3 {
			return violation("Password does not conform to the account password policy.")
		}
		return nil
	}
	switch {
	case len(pw) < pp.MinimumPasswordLength:
		return violation("Password should have at least " + strconv.Itoa(pp.MinimumPasswordLength) + " characters")
	case pp.RequireUppercaseCharacters && !upper:
		return violation("Password should have at least one uppercase letter")
	case pp.RequireLowercaseCharacters && !lower:
		return violation("Password should have at least one lowercase letter")
	case pp.RequireNumbers && !digit:
		return violation("Password should have at least one number")
	case pp.RequireSymbols && !symbol:
		return violation("Password should have at least one symbol")
	}
	return nil
}
