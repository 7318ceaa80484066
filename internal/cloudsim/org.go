package cloudsim

import "strings"

// orgHandlers serves the Organizations actions warden uses to walk an organisation. The
// organisation spans every account of the world; its management account reads it all,
// member accounts may only describe the organisation itself.
func (s *Sim) orgHandlers() map[string]jsonHandler {
	return map[string]jsonHandler{
		"DescribeOrganization": s.orgDescribeOrganization,
		"ListAccounts":         s.orgListAccounts,
		"DescribeAccount":      s.orgDescribeAccount,
		"ListRoots":            s.orgListRoots,
	}
}

// orgOf returns the organisation the caller belongs to; mgmt requires the caller to be its
// management account.
func (s *Sim) orgOf(c *call, mgmt bool) (*Organization, error) {
	o := s.world.AWS.Organization
	if o == nil {
		return nil, errf(kindInvalid, "AWSOrganizationsNotInUseException", "Your account is not a member of an organization.")
	}
	if s.orgAccountByID(c.Account) == nil {
		return nil, errf(kindInvalid, "AWSOrganizationsNotInUseException", "Your account is not a member of an organization.")
	}
	if mgmt && c.Account != o.Management {
		return nil, errf(kindDenied, "AccessDeniedException", "You don't have permissions to access this resource.")
	}
	return o, nil
}

// orgID is the organisation's id, o- and 10 characters; the world may leave it out.
func orgID(o *Organization) string {
	if o.ID != "" {
		return o.ID
	}
	return "o-" + strings.ToLower(makeID("", "org/"+o.Management, 10))
}

func orgRootID(o *Organization) string {
	return "r-" + strings.ToLower(makeID("", "root/"+orgID(o), 4))
}

func orgAccountARN(o *Organization, id string) string {
	return "arn:aws:organizations::" + o.Management + ":account/" + orgID(o) + "/" + id
}

type orgPolicyType struct {
	Type   string
	Status string
}

func orgPolicyTypes() []orgPolicyType {
	return []orgPolicyType{{Type: "SERVICE_CONTROL_POLICY", Status: "ENABLED"}}
}

type orgAccount struct {
	ID              string `json:"Id"`
	ARN             string `json:"Arn"`
	Email           string
	Name            string
	Status          string
	State           string
	JoinedMethod    string
	JoinedTimestamp *awsEpoch `json:",omitempty"`
}

func (s *Sim) orgAccountOut(o *Organization, a *Account) orgAccount {
	method := "INVITED"
	if a.ID == o.Management {
		method = "CREATED"
	}
	return orgAccount{ID: a.ID, ARN: orgAccountARN(o, a.ID), Email: orgEmail(a), Name: or(a.Name, a.ID),
		Status: a.Status, State: a.Status, JoinedMethod: method, JoinedTimestamp: epochOf(a.Root.Created)}
}

// orgEmail is the account's root email; every AWS account has one.
func orgEmail(a *Account) string {
	return or(a.Email, "aws+"+a.ID+"@example.com")
}

func (s *Sim) orgDescribeOrganization(c *call, body []byte) (any, error) {
	o, err := s.orgOf(c, false)
	if err != nil {
		return nil, err
	}
	email := ""
	if a := s.orgAccountByID(o.Management); a != nil {
		email = orgEmail(a)
	}
	return map[string]any{"Organization": map[string]any{
		"Id":                   orgID(o),
		"Arn":                  "arn:aws:organizations::" + o.Management + ":organization/" + orgID(o),
		"FeatureSet":           "ALL",
		"MasterAccountArn":     orgAccountARN(o, o.Management),
		"MasterAccountId":      o.Management,
		"MasterAccountEmail":   email,
		"AvailablePolicyTypes": orgPolicyTypes(),
	}}, nil
}

// orgPage reads NextToken and MaxResults (1–20; default 20) of a List call.
func orgPage(body []byte, n int) (start, end int, next string, err error) {
	var in struct {
		NextToken  string
		MaxResults *int
	}
	if err := decodeJSON(body, &in); err != nil {
		return 0, 0, "", err
	}
	size := 20
	if in.MaxResults != nil {
		if *in.MaxResults < 1 || *in.MaxResults > 20 {
			return 0, 0, "", errf(kindInvalid, "InvalidInputException", "MaxResults must be between 1 and 20")
		}
		size = *in.MaxResults
	}
	off, ok := offsetFromToken(in.NextToken)
	if !ok {
		return 0, 0, "", errf(kindInvalid, "InvalidInputException", "The NextToken is not valid")
	}
	start, end, next = offsetWindow(n, off, size)
	return start, end, next, nil
}

func (s *Sim) orgListAccounts(c *call, body []byte) (any, error) {
	o, err := s.orgOf(c, true)
	if err != nil {
		return nil, err
	}
	start, end, next, err := orgPage(body, s.orgAccounts())
	if err != nil {
		return nil, err
	}
	out := make([]orgAccount, 0, end-start)
	for i := start; i < end; i++ {
		out = append(out, s.orgAccountOut(o, s.orgAccountAt(i)))
	}
	res := map[string]any{"Accounts": out}
	if next != "" {
		res["NextToken"] = next
	}
	return res, nil
}

func (s *Sim) orgDescribeAccount(c *call, body []byte) (any, error) {
	var in struct{ AccountId string }
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	o, err := s.orgOf(c, true)
	if err != nil {
		return nil, err
	}
	if a := s.orgAccountByID(in.AccountId); a != nil {
		return map[string]any{"Account": s.orgAccountOut(o, a)}, nil
	}
	return nil, errf(kindNotFound, "AccountNotFoundException", "You specified an account that doesn't exist.")
}

func (s *Sim) orgListRoots(c *call, body []byte) (any, error) {
	o, err := s.orgOf(c, true)
	if err != nil {
		return nil, err
	}
	if _, _, _, err := orgPage(body, 1); err != nil {
		return nil, err
	}
	root := map[string]any{
		"Id":          orgRootID(o),
		"Arn":         "arn:aws:organizations::" + o.Management + ":root/" + orgID(o) + "/" + orgRootID(o),
		"Name":        "Root",
		"PolicyTypes": orgPolicyTypes(),
	}
	return map[string]any{"Roots": []any{root}}, nil
}
