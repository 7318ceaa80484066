package cloudsim

import (
	"crypto/sha1"
	"encoding/base32"
	"fmt"
	"math/big"
	"strings"
	"time"
)

// prepare fills what a world file may leave out (ids, ARNs, paths, statuses) and mints
// certificates given as specs.
func (s *Sim) prepare() error {
	m := newMinter()
	for _, a := range s.world.AWS.Accounts {
		if err := s.prepareAccount(a); err != nil {
			return err
		}
		for _, c := range a.ServerCertificates {
			if err := m.fill(&c.Cert); err != nil {
				return fmt.Errorf("account %s: server certificate %s: %w", a.ID, c.Name, err)
			}
		}
		for _, c := range a.Certificates {
			if c.Cert.PEM == "" && c.Cert.Subject == "" {
				continue // a certificate still pending validation has no body
			}
			if err := m.fill(&c.Cert); err != nil {
				return fmt.Errorf("account %s: certificate %s: %w", a.ID, c.ID, err)
			}
		}
	}
	for _, o := range s.world.GCP.Organizations {
		preparePolicy(&o.IAMPolicy)
	}
	for _, f := range s.world.GCP.Folders {
		if f.DisplayName == "" {
			f.DisplayName = "folder-" + f.ID
		}
		preparePolicy(&f.IAMPolicy)
	}
	for _, p := range s.world.GCP.Projects {
		s.prepareProject(p)
		for _, c := range p.SslCertificates {
			if c.Cert.PEM == "" && c.Cert.Subject == "" {
				continue
			}
			if err := m.fill(&c.Cert); err != nil {
				return fmt.Errorf("project %s: SSL certificate %s: %w", p.ID, c.Name, err)
			}
		}
	}
	return nil
}

func (s *Sim) prepareAccount(a *Account) error {
	now := s.now().UTC().Truncate(time.Second)
	if a.Status == "" {
		a.Status = "ACTIVE"
	}
	if len(a.Regions) == 0 {
		a.Regions = []string{"us-east-1"}
	}
	if a.Root.Created.IsZero() {
		a.Root.Created = now
	}
	if an := a.AccessAnalyzer; an != nil {
		if err := an.defaults(a); err != nil {
			return err
		}
		if an.Created.IsZero() {
			an.Created = now
		}
	}
	for _, u := range a.Users {
		prepareIAMEntity(&u.Path, &u.ID, &u.Created, "AIDA", a.ID+"/user/"+u.Name, now)
		for _, k := range u.AccessKeys {
			if k.Status == "" {
				k.Status = "Active"
			}
			if k.Created.IsZero() {
				k.Created = u.Created
			}
		}
	}
	for _, g := range a.Groups {
		prepareIAMEntity(&g.Path, &g.ID, &g.Created, "AGPA", a.ID+"/group/"+g.Name, now)
	}
	for _, r := range a.Roles {
		prepareIAMEntity(&r.Path, &r.ID, &r.Created, "AROA", a.ID+"/role/"+r.Name, now)
		if r.MaxSessionDuration == 0 {
			r.MaxSessionDuration = 3600
		}
	}
	for _, p := range a.Policies {
		p.Path = orPath(p.Path)
		if p.ARN == "" {
			p.ARN = policyARN(a.ID, p)
		}
		if p.ID == "" {
			p.ID = makeID("ANPA", p.ARN, 17)
		}
		if p.Created.IsZero() {
			p.Created = now
		}
		if p.Updated.IsZero() {
			p.Updated = p.Created
		}
		if len(p.Versions) == 0 {
			p.Versions = []PolicyVersion{{ID: "v1", Document: p.Document, Created: p.Updated}}
		}
		if p.DefaultVersion == "" {
			p.DefaultVersion = p.Versions[len(p.Versions)-1].ID
		}
		p.Document = ""
	}
	for _, c := range a.ServerCertificates {
		prepareIAMEntity(&c.Path, &c.ID, &c.Uploaded, "ASCA", a.ID+"/server-certificate/"+c.Name, now)
	}
	for _, c := range a.Certificates {
		if c.Type == "" {
			c.Type = "AMAZON_ISSUED"
		}
		if c.Status == "" {
			c.Status = "ISSUED"
		}
		if c.Created.IsZero() {
			c.Created = now
		}
	}
	prepareSecrets(a, now)
	for _, g := range a.SecurityGroups {
		if g.VPC == "" {
			g.VPC = "vpc-" + strings.ToLower(makeID("", a.ID+"/"+g.Region+"/vpc", 8))
		}
	}
	prepareInterfaces(a)
	return nil
}

// prepareIAMEntity fills the defaults users, groups, roles and server certificates share:
// the path "/", the id IAM would have given the entity (makeID of prefix and key, as the
// Create* actions mint it) and the creation time now.
func prepareIAMEntity(path, id *string, created *time.Time, prefix, key string, now time.Time) {
	*path = orPath(*path)
	if *id == "" {
		*id = makeID(prefix, key, 17)
	}
	if created.IsZero() {
		*created = now
	}
}

func (s *Sim) prepareProject(p *Project) {
	if p.Name == "" {
		p.Name = p.ID
	}
	preparePolicy(&p.IAMPolicy)
	for _, sa := range p.ServiceAccounts {
		if sa.UniqueID == "" {
			sa.UniqueID = numericID(sa.Email, 21)
		}
		for _, k := range sa.Keys {
			if k.Type == "" {
				k.Type = "USER_MANAGED"
			}
			if k.Algorithm == "" {
				k.Algorithm = "KEY_ALG_RSA_2048"
			}
		}
	}
	for _, n := range p.Networks {
		if n.ID == "" {
			n.ID = numericID(p.ID+"/network/"+n.Name, 19)
		}
	}
	for _, f := range p.Firewalls {
		if f.ID == "" {
			f.ID = numericID(p.ID+"/firewall/"+f.Name, 19)
		}
		if f.Direction == "" {
			f.Direction = "INGRESS"
		}
		if f.Priority == 0 {
			f.Priority = 1000
		}
	}
	for _, in := range p.Instances {
		if in.ID == "" {
			in.ID = numericID(p.ID+"/instance/"+in.Zone+"/"+in.Name, 19)
		}
		if len(in.Networks) == 0 {
			in.Networks = []string{"default"}
		}
		if in.Status == "" {
			in.Status = "RUNNING"
		}
	}
	for _, c := range p.SslCertificates {
		if c.ID == "" {
			c.ID = numericID(p.ID+"/sslCertificate/"+c.Name, 19)
		}
		if c.Type == "" {
			c.Type = "SELF_MANAGED"
		}
	}
}

// preparePolicy gives a policy the version and etag GCP would: version 1 unless set, and
// an etag derived from its bindings.
func preparePolicy(p *IAMPolicy) {
	if p.Version == 0 {
		p.Version = 1
	}
	if p.Etag == "" {
		p.Etag = etagOf(*p)
	}
}

// etagOf is a policy's etag: a digest of its bindings, so that it changes with them.
func etagOf(p IAMPolicy) string {
	h := sha1.New()
	fmt.Fprintf(h, "%d", p.Version)
	for _, b := range p.Bindings {
		fmt.Fprintf(h, "|%s=%s", b.Role, strings.Join(b.Members, ","))
		if b.Condition != nil {
			fmt.Fprintf(h, "?%s", b.Condition.Expression)
		}
	}
	return "BwY" + base32.StdEncoding.EncodeToString(h.Sum(nil))[:9]
}

func orPath(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

// makeID derives a stable AWS-style id (prefix + n upper-case letters and digits) from seed.
func makeID(prefix, seed string, n int) string {
	sum := sha1.Sum([]byte(seed))
	enc := base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:])
	for len(enc) < n {
		enc += enc
	}
	return prefix + enc[:n]
}

// numericID derives a stable decimal id of n digits from seed.
func numericID(seed string, n int) string {
	sum := sha1.Sum([]byte(seed))
	s := new(big.Int).SetBytes(sum[:]).String()
	for len(s) < n {
		s += s
	}
	if s[0] == '0' {
		s = "1" + s[1:]
	}
	return s[:n]
}

func userARN(acct string, u *User) string {
	return "arn:aws:iam::" + acct + ":user" + orPath(u.Path) + u.Name
}
func roleARN(acct string, r *Role) string {
	return "arn:aws:iam::" + acct + ":role" + orPath(r.Path) + r.Name
}
func groupARN(acct string, g *Group) string {
	return "arn:aws:iam::" + acct + ":group" + orPath(g.Path) + g.Name
}

func policyARN(acct string, p *Policy) string {
	if p.AWSManaged {
		return "arn:aws:iam::aws:policy" + orPath(p.Path) + p.Name
	}
	return "arn:aws:iam::" + acct + ":policy" + orPath(p.Path) + p.Name
}
