package cloudsim

import (
	"net/url"
	"strconv"
	"strings"
	"time"
)

// stsHandlers is the STS action table.
func (s *Sim) stsHandlers() map[string]queryHandler {
	return map[string]queryHandler{
		"GetCallerIdentity": s.getCallerIdentity,
		"AssumeRole":        s.assumeRole,
	}
}

// worldAccount finds an account of the world by id, without creating one (a generated
// account is built, see lookupAccount).
func (s *Sim) worldAccount(id string) *Account { return s.lookupAccount(id) }

// assumedRoleARN is the ARN of a role session; it leaves out the role's path, as STS does.
func assumedRoleARN(acct, role, session string) string {
	return "arn:aws:sts::" + acct + ":assumed-role/" + role + "/" + session
}

// getCallerIdentity names the caller: the root user (UserId is the account id), a user
// (its AIDA… id) or a role session (ROLEID:SESSION).
func (s *Sim) getCallerIdentity(c *call, _ url.Values) (any, error) {
	userID := c.Account
	if a := s.worldAccount(c.Account); a != nil {
		if u := iamCallerUser(a, c); u != nil {
			userID = u.ID
		} else if rest, ok := strings.CutPrefix(c.Principal, "arn:aws:sts::"+a.ID+":assumed-role/"); ok {
			role, sess, _ := strings.Cut(rest, "/")
			if r := findRole(a, role); r != nil {
				userID = r.ID + ":" + sess
			}
		}
	}
	return struct {
		Account string
		Arn     string
		UserId  string
	}{c.Account, c.Principal, userID}, nil
}

// assumeRole issues temporary credentials for a role of any world account; later calls
// signed with them act in that account as the role session. Trust policies are not
// evaluated: an existing role can always be assumed. Assuming a role records its last use.
func (s *Sim) assumeRole(c *call, f url.Values) (any, error) {
	arn, err := iamRequired(f, "RoleArn")
	if err != nil {
		return nil, err
	}
	name, err := iamName(f, "RoleSessionName", 64)
	if err != nil {
		return nil, err
	}
	if len(name) < 2 {
		return nil, iamInvalid("1 validation error detected: Value '%s' at 'roleSessionName' failed to satisfy constraint: Member must have length greater than or equal to 2", name)
	}
	duration, set, err := iamInt(f, "DurationSeconds", 900, 43200)
	if err != nil {
		return nil, err
	}
	if !set {
		duration = 3600
	}
	var role *Role
	var acct string
	if rest, ok := strings.CutPrefix(arn, "arn:aws:iam::"); ok {
		acct, _, _ = strings.Cut(rest, ":")
		if a := s.worldAccount(acct); a != nil {
			for _, r := range a.Roles {
				if roleARN(a.ID, r) == arn {
					role = r
				}
			}
		}
	}
	if role == nil {
		return nil, errf(kindDenied, "", "User: %s is not authorized to perform: sts:AssumeRole on resource: %s", c.Principal, arn)
	}
	switch {
	case strings.Contains(c.Principal, ":assumed-role/") && duration > 3600:
		return nil, iamInvalid("The requested DurationSeconds exceeds the 1 hour session limit for roles assumed by role chaining.")
	case duration > role.MaxSessionDuration && role.MaxSessionDuration > 0:
		return nil, iamInvalid("The requested DurationSeconds exceeds the MaxSessionDuration set for this role.")
	}

	now := s.stamp()
	seed := "sts/" + strconv.Itoa(s.nextID())
	akid := makeID("ASIA", seed, 16)
	sessionARN := assumedRoleARN(acct, role.Name, name)
	secret := makeID("", seed+"/secret", 40)
	s.sessions[akid] = session{Account: acct, ARN: sessionARN, Secret: secret, role: role}
	role.LastUsed, role.LastUsedRegion = &now, "us-east-1"

	type user struct {
		Arn           string
		AssumedRoleId string
	}
	type credentials struct {
		AccessKeyId     string
		Expiration      awsTime
		SecretAccessKey string
		SessionToken    string
	}
	return struct {
		AssumedRoleUser user
		Credentials     credentials
	}{
		user{sessionARN, role.ID + ":" + name},
		credentials{akid, awsTime(now.Add(time.Duration(duration) * time.Second)),
			secret, "FwoGZXIvYXdzE" + makeID("", seed+"/token", 180)},
	}, nil
}
