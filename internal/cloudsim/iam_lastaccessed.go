package cloudsim

import (
	"crypto/sha1"
	"encoding/hex"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Access Advisor: GenerateServiceLastAccessedDetails and GetServiceLastAccessedDetails,
// for users, groups and roles (IAM also reports on managed policies; the simulator does
// not). A report lists the services the principal's permissions policies grant (see
// iam_grants.go), each with its last use within AWS's tracking period, from the world's
// access records and the calls the simulator served (access.go).

// trackingPeriod is how far back IAM reports use: 400 days before the report. Older use
// is reported as none.
const trackingPeriod = 400 * 24 * time.Hour

// Granularities of a report (AccessAdvisorUsageGranularityType).
const (
	serviceLevel = "SERVICE_LEVEL"
	actionLevel  = "ACTION_LEVEL"
)

// actionTracked are the services whose actions an ACTION_LEVEL report details: those the
// simulator serves, whose actions it records. A service some access record of the account
// names an action of is tracked too, so that worlds can declare tracked use of others.
var actionTracked = map[string]bool{"acm": true, "ec2": true, "iam": true, "s3": true, "secretsmanager": true, "sts": true}

// s3Operations are the S3 operations the simulator serves (s3Route).
var s3Operations = []string{"ListBuckets", "CreateBucket", "HeadBucket", "ListObjectsV2", "PutObject", "GetObject", "HeadObject", "DeleteObject"}

// accessJob is a generated report: computed when generated, answered IN_PROGRESS to the
// first read and COMPLETED from then on, so that clients have to poll as they do with IAM.
type accessJob struct {
	principal   string // who generated it: IAM answers a job to its generator only
	granularity string
	created     time.Time
	polled      bool
	services    []xServiceLastAccessed
}

type xServiceLastAccessed struct {
	LastAuthenticated          *awsTime
	LastAuthenticatedEntity    string `xml:",omitempty"`
	LastAuthenticatedRegion    string `xml:",omitempty"`
	ServiceName                string
	ServiceNamespace           string
	TotalAuthenticatedEntities int
	// TrackedActionsLastAccessed is nil (left out) for a report at service level and for
	// services without action tracking.
	TrackedActionsLastAccessed *xTrackedActions
}

type xTrackedActions struct {
	Member []xTrackedAction `xml:"member"`
}

type xTrackedAction struct {
	ActionName         string
	LastAccessedEntity string `xml:",omitempty"`
	LastAccessedRegion string `xml:",omitempty"`
	LastAccessedTime   *awsTime
}

// accessSource is one entity whose use a report counts: the principal itself, or for a
// group each member (and the group's own records).
type accessSource struct {
	arn     string
	records []AccessRecord
}

func (s *Sim) generateServiceLastAccessed(jobs map[string]*accessJob, a *Account, c *call, f url.Values) (any, error) {
	arn, err := iamRequired(f, "Arn")
	if err != nil {
		return nil, err
	}
	gran := f.Get("Granularity")
	switch gran {
	case "":
		gran = serviceLevel
	case serviceLevel, actionLevel:
	default:
		return nil, errf(kindInvalid, "InvalidInput", "1 validation error detected: Value '%s' at 'granularity' failed to satisfy constraint: Member must satisfy enum value set: [%s, %s]", gran, serviceLevel, actionLevel)
	}
	sources, docs, err := s.accessSubject(a, arn)
	if err != nil {
		return nil, err
	}
	now := s.stamp()
	id := jobUUID("access-advisor/" + a.ID + "/" + arn + "/" + strconv.Itoa(s.nextID()))
	jobs[id] = &accessJob{principal: c.Principal, granularity: gran, created: now,
		services: s.accessReport(a, policyGrants(docs), sources, gran == actionLevel, now)}
	return struct{ JobId string }{id}, nil
}

func getServiceLastAccessed(jobs map[string]*accessJob, c *call, f url.Values) (any, error) {
	id, err := iamRequired(f, "JobId")
	if err != nil {
		return nil, err
	}
	if len(id) != 36 {
		return nil, iamInvalid("1 validation error detected: Value '%s' at 'jobId' failed to satisfy constraint: Member must have length equal to 36", id)
	}
	j := jobs[id]
	if j == nil || j.principal != c.Principal {
		return nil, noSuchEntity("Job with id %s was not found.", id)
	}
	start, end, pg, err := iamWindow(f, len(j.services))
	if err != nil {
		return nil, err
	}
	out := struct {
		JobStatus            string
		JobType              string
		JobCreationDate      awsTime
		ServicesLastAccessed []xServiceLastAccessed `xml:"ServicesLastAccessed>member"`
		JobCompletionDate    *awsTime
		iamPage
	}{JobStatus: "IN_PROGRESS", JobType: j.granularity, JobCreationDate: awsTime(j.created)}
	if !j.polled {
		// IAM leaves JobCompletionDate out while the job runs, though its model requires it.
		j.polled = true
		return out, nil
	}
	out.JobStatus, out.JobCompletionDate = "COMPLETED", optTime(&j.created)
	out.ServicesLastAccessed, out.iamPage = j.services[start:end], pg
	return out, nil
}

// accessSubject finds the user, role or group arn names in the account: whose use counts
// and the documents of its permissions policies (for a user, its groups' too).
func (s *Sim) accessSubject(a *Account, arn string) ([]accessSource, []Doc, error) {
	if !strings.HasPrefix(arn, "arn:") {
		return nil, nil, errf(kindInvalid, "InvalidInput", "ARN %s is not valid.", arn)
	}
	prefix := "arn:aws:iam::" + a.ID + ":"
	rest, ok := strings.CutPrefix(arn, prefix)
	kind, _, _ := strings.Cut(rest, "/")
	if !ok || (kind != "user" && kind != "role" && kind != "group") {
		if strings.HasPrefix(arn, "arn:aws:iam::") && strings.Contains(arn, ":policy/") {
			return nil, nil, errf(kindInvalid, "InvalidInput", "The simulator reports on users, groups and roles, not on policies: %s.", arn)
		}
		return nil, nil, noSuchEntity("The entity %s does not exist in account %s.", arn, a.ID)
	}
	for _, u := range a.Users {
		if userARN(a.ID, u) == arn {
			docs := s.entityDocs(a, u.AttachedPolicies, u.InlinePolicies)
			for _, name := range u.Groups {
				if g := findGroup(a, name); g != nil {
					docs = append(docs, s.entityDocs(a, g.AttachedPolicies, g.InlinePolicies)...)
				}
			}
			return []accessSource{{arn, u.LastAccessed}}, docs, nil
		}
	}
	for _, r := range a.Roles {
		if roleARN(a.ID, r) == arn {
			return []accessSource{{arn, r.LastAccessed}}, s.entityDocs(a, r.AttachedPolicies, r.InlinePolicies), nil
		}
	}
	for _, g := range a.Groups {
		if groupARN(a.ID, g) == arn {
			var src []accessSource
			if len(g.LastAccessed) > 0 {
				src = append(src, accessSource{arn, g.LastAccessed})
			}
			for _, u := range groupMembers(a, g) {
				src = append(src, accessSource{userARN(a.ID, u), u.LastAccessed})
			}
			return src, s.entityDocs(a, g.AttachedPolicies, g.InlinePolicies), nil
		}
	}
	return nil, nil, noSuchEntity("The entity %s does not exist.", arn)
}

// entityDocs are the documents of an entity's attached managed policies (their default
// versions) and inline policies.
func (s *Sim) entityDocs(a *Account, attached []string, inline []InlinePolicy) []Doc {
	var docs []Doc
	for _, arn := range attached {
		if p := s.lookupPolicy(a, arn); p != nil {
			for _, v := range p.Versions {
				if v.ID == p.DefaultVersion {
					docs = append(docs, v.Document)
				}
			}
		}
	}
	for _, p := range inline {
		docs = append(docs, p.Document)
	}
	return docs
}

// lastUse is the latest use among records, and how many sources used at all.
type lastUse struct {
	at       time.Time
	entity   string
	region   string
	entities int
}

// latest finds the latest use within [since, until] by the sources of the records
// keep selects.
func latest(sources []accessSource, since, until time.Time, keep func(AccessRecord) bool) lastUse {
	var u lastUse
	for _, src := range sources {
		used := false
		for _, r := range src.records {
			if r.At.Before(since) || r.At.After(until) || !keep(r) {
				continue
			}
			used = true
			if r.At.After(u.at) {
				u.at, u.entity, u.region = r.At, src.arn, r.Region
			}
		}
		if used {
			u.entities++
		}
	}
	return u
}

// accessReport computes a report at now: the services g grants, sorted by namespace,
// each with its last use by the sources within the tracking period and, at action level,
// its tracked actions. Records later than now (a world ahead of the simulator's clock)
// have not happened yet and do not count.
func (s *Sim) accessReport(a *Account, g grants, sources []accessSource, actions bool, now time.Time) []xServiceLastAccessed {
	since := now.Add(-trackingPeriod)
	candidates := map[string]bool{}
	for ns := range serviceCatalog {
		candidates[ns] = true
	}
	for _, ns := range g.namespaces() {
		candidates[ns] = true
	}
	for _, src := range sources {
		for _, r := range src.records {
			candidates[r.Service] = true
		}
	}
	var recorded map[string][]string // namespace → actions the account's records name
	if actions {
		recorded = recordedActions(a)
	}
	namespaces := make([]string, 0, len(candidates))
	for ns := range candidates {
		if g.allowsService(ns) {
			namespaces = append(namespaces, ns)
		}
	}
	sort.Strings(namespaces)
	out := make([]xServiceLastAccessed, 0, len(namespaces))
	for _, ns := range namespaces {
		u := latest(sources, since, now, func(r AccessRecord) bool { return r.Service == ns })
		x := xServiceLastAccessed{ServiceName: serviceName(ns), ServiceNamespace: ns, TotalAuthenticatedEntities: u.entities}
		if u.entities > 0 {
			x.LastAuthenticated, x.LastAuthenticatedEntity, x.LastAuthenticatedRegion = optTime(&u.at), u.entity, u.region
		}
		if actions && (actionTracked[ns] || len(recorded[ns]) > 0) {
			x.TrackedActionsLastAccessed = s.trackedActions(ns, g, recorded[ns], sources, since, now)
		}
		out = append(out, x)
	}
	return out
}

// trackedActions lists the actions of a tracked service that g grants, among those the
// simulator serves and those records name, each with its last use.
func (s *Sim) trackedActions(ns string, g grants, recorded []string, sources []accessSource, since, now time.Time) *xTrackedActions {
	names := map[string]string{} // lower-cased → as served, else as first recorded
	for _, op := range s.servedOperations(ns) {
		n := iamActionOf(ns, op)
		names[strings.ToLower(n)] = n
	}
	for _, n := range recorded {
		if _, ok := names[strings.ToLower(n)]; !ok {
			names[strings.ToLower(n)] = n
		}
	}
	list := make([]string, 0, len(names))
	for _, n := range names {
		if g.allowsAction(ns + ":" + n) {
			list = append(list, n)
		}
	}
	if len(list) == 0 {
		return nil
	}
	sort.Strings(list)
	out := &xTrackedActions{}
	for _, n := range list {
		action := ns + ":" + n
		u := latest(sources, since, now, func(r AccessRecord) bool { return strings.EqualFold(r.Action, action) })
		x := xTrackedAction{ActionName: n}
		if u.entities > 0 {
			x.LastAccessedTime, x.LastAccessedEntity, x.LastAccessedRegion = optTime(&u.at), u.entity, u.region
		}
		out.Member = append(out.Member, x)
	}
	return out
}

// servedOperations are the operations the simulator serves for a service.
func (s *Sim) servedOperations(ns string) []string {
	if ns == "s3" {
		return s3Operations
	}
	var ops []string
	for op := range s.query[ns] {
		ops = append(ops, op)
	}
	for op := range s.jsonx[ns] {
		ops = append(ops, op)
	}
	return ops
}

// recordedActions are the action names ("GetObject") the access records of the
// account's users, groups and roles name, by service.
func recordedActions(a *Account) map[string][]string {
	out := map[string][]string{}
	add := func(rs []AccessRecord) {
		for _, r := range rs {
			if _, name, ok := strings.Cut(r.Action, ":"); ok {
				out[r.Service] = append(out[r.Service], name)
			}
		}
	}
	for _, u := range a.Users {
		add(u.LastAccessed)
	}
	for _, g := range a.Groups {
		add(g.LastAccessed)
	}
	for _, r := range a.Roles {
		add(r.LastAccessed)
	}
	return out
}

// jobUUID is a job id in the shape IAM gives them (36 characters, UUID-like), derived
// from seed.
func jobUUID(seed string) string {
	sum := sha1.Sum([]byte(seed))
	h := hex.EncodeToString(sum[:16])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
