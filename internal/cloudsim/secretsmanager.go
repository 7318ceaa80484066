package cloudsim

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// Secrets Manager speaks AWS JSON 1.1 (X-Amz-Target "secretsmanager."). Secrets are
// regional, as ACM certificates are: a call sees the secrets of its account in its SigV4
// region. Each secret keeps its versions with their staging labels: PutSecretValue moves
// AWSCURRENT to the new version and AWSPREVIOUS to the one that had it;
// UpdateSecretVersionStage moves a label by hand (a rollback moves AWSCURRENT back).

// The staging labels Secrets Manager itself moves.
const (
	stageCurrent  = "AWSCURRENT"
	stagePrevious = "AWSPREVIOUS"
)

// Limits of Secrets Manager the simulator enforces.
const (
	smMaxValue    = 65536 // bytes of a SecretString or SecretBinary
	smMaxVersions = 100   // deprecated versions beyond it are removed, oldest first
	smMaxTags     = 50
)

// smHandlers serves the Secrets Manager actions warden's rotation uses, and those a person
// checks its work with.
func (s *Sim) smHandlers() map[string]jsonHandler {
	return map[string]jsonHandler{
		"CreateSecret":             s.smCreateSecret,
		"PutSecretValue":           s.smPutSecretValue,
		"GetSecretValue":           s.smGetSecretValue,
		"DescribeSecret":           s.smDescribeSecret,
		"ListSecrets":              s.smListSecrets,
		"ListSecretVersionIds":     s.smListSecretVersionIds,
		"UpdateSecretVersionStage": s.smUpdateSecretVersionStage,
		"DeleteSecret":             s.smDeleteSecret,
		"RestoreSecret":            s.smRestoreSecret,
		"TagResource":              s.smTagResource,
		"UntagResource":            s.smUntagResource,
	}
}

// Secrets Manager errors, with its codes (answered with HTTP 400, as every AWS JSON
// client error).

func smNotFound() *apiError {
	return errf(kindNotFound, "ResourceNotFoundException", "Secrets Manager can't find the specified secret.")
}

func smInvalidParam(format string, args ...any) *apiError {
	return errf(kindInvalid, "InvalidParameterException", format, args...)
}

func smInvalidRequest(format string, args ...any) *apiError {
	return errf(kindInvalid, "InvalidRequestException", format, args...)
}

func smExists(format string, args ...any) *apiError {
	return errf(kindConflict, "ResourceExistsException", format, args...)
}

// smConstraint is the error of a request that breaks a constraint of the API's model.
func smConstraint(format string, args ...any) *apiError {
	return errf(kindInvalid, "ValidationException", "1 validation error detected: "+format, args...)
}

// smMarked is the answer of a secret marked for deletion to everything but DescribeSecret,
// ListSecretVersionIds, DeleteSecret and RestoreSecret.
func smMarked() *apiError {
	return smInvalidRequest("You can't perform this operation on the secret because it was marked for deletion.")
}

func secretARN(a *Account, sec *Secret) string {
	return "arn:aws:secretsmanager:" + sec.Region + ":" + a.ID + ":secret:" + sec.Name + "-" + sec.Suffix
}

// smSuffixChars are the characters of the suffix Secrets Manager appends to a name.
const smSuffixChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// smSuffix derives the six characters of a secret's ARN from seed.
func smSuffix(seed string) string {
	sum := sha1.Sum([]byte(seed))
	b := make([]byte, 6)
	for i := range b {
		b[i] = smSuffixChars[int(sum[i])%len(smSuffixChars)]
	}
	return string(b)
}

// uuidOf derives a stable UUID-shaped id from seed.
func uuidOf(seed string) string {
	sum := sha1.Sum([]byte(seed))
	h := hex.EncodeToString(sum[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// smStamp is the simulator's clock as Secrets Manager records times: to the millisecond.
func (s *Sim) smStamp() time.Time { return s.now().UTC().Truncate(time.Millisecond) }

// prepareSecrets fills what a world file may leave out of its secrets: the ARN suffix,
// times, version ids, and the one version of a secret given by its value.
func prepareSecrets(a *Account, now time.Time) {
	for _, sec := range a.Secrets {
		if sec.Suffix == "" {
			sec.Suffix = smSuffix(a.ID + "/" + sec.Region + "/secret/" + sec.Name)
		}
		if sec.Created.IsZero() {
			sec.Created = now
		}
		if sec.Changed.IsZero() {
			sec.Changed = sec.Created
		}
		if len(sec.Versions) == 0 && (sec.String != "" || len(sec.Binary) > 0) {
			sec.Versions = []*SecretVersion{{String: sec.String, Binary: sec.Binary, Stages: []string{stageCurrent}}}
			sec.String, sec.Binary = "", nil
		}
		for i, v := range sec.Versions {
			if v.ID == "" {
				v.ID = uuidOf(fmt.Sprintf("%s/%s/secret/%s/version/%d", a.ID, sec.Region, sec.Name, i))
			}
			if v.Created.IsZero() {
				v.Created = sec.Created
			}
		}
		if n := len(sec.Versions); n > 0 && smHolder(sec, stageCurrent) == nil {
			last := sec.Versions[n-1]
			last.Stages = append(last.Stages, stageCurrent)
		}
	}
}

// validateSecrets checks an account's secrets as a world file gives them.
func validateSecrets(list []*Secret) error {
	seen := map[string]bool{}
	for j, sec := range list {
		switch {
		case sec.Name == "":
			return fmt.Errorf("secrets[%d]: name is required", j)
		case sec.Region == "":
			return fmt.Errorf("secrets[%d] (%s): region is required", j, sec.Name)
		case seen[sec.Region+"/"+sec.Name]:
			return fmt.Errorf("secrets[%d] (%s): the name appears twice in %s", j, sec.Name, sec.Region)
		case len(sec.Versions) > 0 && (sec.String != "" || len(sec.Binary) > 0):
			return fmt.Errorf("secrets[%d] (%s): give either string or binary (the one version) or versions, not both", j, sec.Name)
		}
		seen[sec.Region+"/"+sec.Name] = true
		if e := smCheckName(sec.Name); e != nil {
			return fmt.Errorf("secrets[%d] (%s): %s", j, sec.Name, e.Message)
		}
		ids, stages := map[string]bool{}, map[string]bool{}
		for k, v := range sec.Versions {
			if v.ID != "" && ids[v.ID] {
				return fmt.Errorf("secrets[%d] (%s).versions[%d]: version id %s appears twice", j, sec.Name, k, v.ID)
			}
			ids[v.ID] = true
			if v.String != "" && len(v.Binary) > 0 {
				return fmt.Errorf("secrets[%d] (%s).versions[%d]: give either string or binary, not both", j, sec.Name, k)
			}
			for _, st := range v.Stages {
				if stages[st] {
					return fmt.Errorf("secrets[%d] (%s).versions[%d]: staging label %s is on two versions", j, sec.Name, k, st)
				}
				stages[st] = true
			}
		}
	}
	return nil
}

// smCheckName validates a secret name as CreateSecret does.
func smCheckName(name string) *apiError {
	if len(name) < 1 || len(name) > 512 {
		return smConstraint("Value at 'name' failed to satisfy constraint: Member must have length between 1 and 512")
	}
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/_+=.@-", r)
		if !ok {
			return smInvalidParam("Invalid name. Must be a valid name containing alphanumeric characters, or any of the following: -/_+=.@!")
		}
	}
	return nil
}

// smCheckToken validates a ClientRequestToken given by the caller.
func smCheckToken(tok string) *apiError {
	if tok != "" && (len(tok) < 32 || len(tok) > 64) {
		return smConstraint("Value '%s' at 'clientRequestToken' failed to satisfy constraint: Member must have length between 32 and 64", tok)
	}
	return nil
}

// smValue is a secret value as a request carries it: SecretString or SecretBinary.
type smValue struct {
	String *string
	Binary []byte
}

func (v smValue) given() bool { return v.String != nil || len(v.Binary) > 0 }

func (v smValue) check() *apiError {
	switch {
	case v.String != nil && len(v.Binary) > 0:
		return smInvalidParam("You can't specify both a binary secret value and a string secret value in the same secret.")
	case v.String != nil && len(*v.String) > smMaxValue:
		return smConstraint("Value at 'secretString' failed to satisfy constraint: Member must have length less than or equal to %d", smMaxValue)
	case len(v.Binary) > smMaxValue:
		return smConstraint("Value at 'secretBinary' failed to satisfy constraint: Member must have length less than or equal to %d", smMaxValue)
	}
	return nil
}

// same reports whether version ver holds exactly this value.
func (v smValue) same(ver *SecretVersion) bool {
	if v.String != nil {
		return ver.Binary == nil && ver.String == *v.String
	}
	return ver.String == "" && bytes.Equal(ver.Binary, v.Binary)
}

func (v smValue) version(id string, at time.Time) *SecretVersion {
	ver := &SecretVersion{ID: id, Created: at}
	if v.String != nil {
		ver.String = *v.String
	} else {
		ver.Binary = slices.Clone(v.Binary)
	}
	return ver
}

type smTag struct {
	Key   string
	Value string
}

func smCheckTags(tags []smTag, existing map[string]string) *apiError {
	n := len(existing)
	for _, t := range tags {
		if len(t.Key) < 1 || len(t.Key) > 128 || len(t.Value) > 256 {
			return smConstraint("Value at 'tags' failed to satisfy constraint: a tag key has 1 to 128 characters, a value at most 256")
		}
		if strings.HasPrefix(strings.ToLower(t.Key), "aws:") {
			return smInvalidParam("Invalid tag key: the prefix aws: is reserved for AWS use")
		}
		if _, ok := existing[t.Key]; !ok {
			n++
		}
	}
	if n > smMaxTags {
		return smInvalidParam("A secret can have at most %d tags.", smMaxTags)
	}
	return nil
}

func smTagList(tags map[string]string) []smTag {
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]smTag, 0, len(keys))
	for _, k := range keys {
		out = append(out, smTag{k, tags[k]})
	}
	return out
}

// smAccount is the call's account with its secrets past their deletion date removed.
func (s *Sim) smAccount(c *call) (*Account, error) {
	a, err := s.regionalAccount(c)
	if err != nil {
		return nil, err
	}
	now := s.now()
	a.Secrets = slices.DeleteFunc(a.Secrets, func(sec *Secret) bool {
		return sec.Purge != nil && !now.Before(*sec.Purge)
	})
	return a, nil
}

// smFind resolves a SecretId — the name, the ARN, or the ARN without its six-character
// suffix — among the secrets of the call's account and region, marked ones included.
func (s *Sim) smFind(c *call, id string) (*Account, *Secret, error) {
	if id == "" {
		return nil, nil, smConstraint("Value null at 'secretId' failed to satisfy constraint: Member must not be null")
	}
	a, err := s.smAccount(c)
	if err != nil {
		return nil, nil, err
	}
	name, full := id, ""
	if strings.HasPrefix(id, "arn:") {
		parts := strings.SplitN(id, ":", 7)
		if len(parts) != 7 || parts[2] != "secretsmanager" || parts[5] != "secret" || parts[3] != c.Region || parts[4] != a.ID {
			return nil, nil, smNotFound()
		}
		name, full = "", parts[6]
	}
	for _, sec := range a.Secrets {
		if sec.Region != c.Region {
			continue
		}
		if name != "" && sec.Name == name || full != "" && (sec.Name+"-"+sec.Suffix == full || sec.Name == full) {
			return a, sec, nil
		}
	}
	return nil, nil, smNotFound()
}

// smLive is smFind for the actions a secret marked for deletion refuses.
func (s *Sim) smLive(c *call, id string) (*Account, *Secret, error) {
	a, sec, err := s.smFind(c, id)
	if err != nil {
		return nil, nil, err
	}
	if sec.Deleted != nil {
		return nil, nil, smMarked()
	}
	return a, sec, nil
}

func smVersion(sec *Secret, id string) *SecretVersion {
	for _, v := range sec.Versions {
		if v.ID == id {
			return v
		}
	}
	return nil
}

// smHolder is the version that has the staging label, or nil.
func smHolder(sec *Secret, stage string) *SecretVersion {
	for _, v := range sec.Versions {
		if slices.Contains(v.Stages, stage) {
			return v
		}
	}
	return nil
}

// smMoveStage attaches stage to version to (nil: to none), taking it from the version that
// had it. Moving AWSCURRENT moves AWSPREVIOUS to the version AWSCURRENT left, as Secrets
// Manager does.
func smMoveStage(sec *Secret, stage string, to *SecretVersion) {
	from := smHolder(sec, stage)
	if from == to {
		return
	}
	if from != nil {
		from.Stages = slices.DeleteFunc(from.Stages, func(x string) bool { return x == stage })
	}
	if to != nil {
		to.Stages = append(to.Stages, stage)
	}
	if stage == stageCurrent && from != nil && to != nil {
		smMoveStage(sec, stagePrevious, from)
	}
}

// smPrune removes the oldest deprecated versions (those without a staging label) beyond
// smMaxVersions.
func smPrune(sec *Secret) {
	for len(sec.Versions) > smMaxVersions {
		i := slices.IndexFunc(sec.Versions, func(v *SecretVersion) bool { return len(v.Stages) == 0 })
		if i < 0 {
			return
		}
		sec.Versions = slices.Delete(sec.Versions, i, i+1)
	}
}

// smStagesMap is a secret's staged versions and their labels (deprecated ones left out).
func smStagesMap(sec *Secret) map[string][]string {
	out := map[string][]string{}
	for _, v := range sec.Versions {
		if len(v.Stages) > 0 {
			out[v.ID] = slices.Clone(v.Stages)
		}
	}
	return out
}

func smDay(t *time.Time) *awsEpoch {
	if t == nil {
		return nil
	}
	return epochOf(t.UTC().Truncate(24 * time.Hour))
}

func smOptTime(t *time.Time) *awsEpoch {
	if t == nil {
		return nil
	}
	return epochOf(*t)
}

// smNamed is the answer of most writes: which secret, and which version when there is one.
type smNamed struct {
	ARN           string
	Name          string
	VersionId     string   `json:",omitempty"`
	VersionStages []string `json:",omitempty"`
}

func (s *Sim) smCreateSecret(c *call, body []byte) (any, error) {
	var in struct {
		Name                        string
		ClientRequestToken          string
		Description                 string
		KmsKeyId                    string
		SecretString                *string
		SecretBinary                []byte
		Tags                        []smTag
		AddReplicaRegions           []struct{ Region string }
		ForceOverwriteReplicaSecret bool
	}
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	val := smValue{in.SecretString, in.SecretBinary}
	for _, e := range []*apiError{smCheckName(in.Name), smCheckToken(in.ClientRequestToken), val.check(), smCheckTags(in.Tags, nil)} {
		if e != nil {
			return nil, e
		}
	}
	if len(in.Description) > 2048 {
		return nil, smConstraint("Value at 'description' failed to satisfy constraint: Member must have length less than or equal to 2048")
	}
	if len(in.AddReplicaRegions) > 0 {
		return nil, smInvalidRequest("The simulator does not replicate secrets to other regions.")
	}
	a, err := s.smAccount(c)
	if err != nil {
		return nil, err
	}
	for _, sec := range a.Secrets {
		if sec.Region != c.Region || sec.Name != in.Name {
			continue
		}
		if sec.Deleted != nil {
			return nil, smInvalidRequest("You can't create this secret because a secret with this name is already scheduled for deletion.")
		}
		// The same request again (same token, same value) is answered as the first was.
		if v := smVersion(sec, in.ClientRequestToken); v != nil && in.ClientRequestToken != "" && val.given() && val.same(v) {
			return smNamed{ARN: secretARN(a, sec), Name: sec.Name, VersionId: v.ID}, nil
		}
		return nil, smExists("The operation failed because the secret %s already exists.", in.Name)
	}
	now := s.smStamp()
	sec := &Secret{Name: in.Name, Region: c.Region, Suffix: smSuffix(fmt.Sprintf("%s/%s/secret/%s/%d", a.ID, c.Region, in.Name, s.nextID())),
		Description: in.Description, KMSKeyID: in.KmsKeyId, Created: now, Changed: now}
	for _, t := range in.Tags {
		if sec.Tags == nil {
			sec.Tags = map[string]string{}
		}
		sec.Tags[t.Key] = t.Value
	}
	out := smNamed{ARN: secretARN(a, sec), Name: sec.Name}
	if val.given() {
		tok := or(in.ClientRequestToken, uuidOf(fmt.Sprintf("%s/version/%d", out.ARN, s.nextID())))
		v := val.version(tok, now)
		v.Stages = []string{stageCurrent}
		sec.Versions = []*SecretVersion{v}
		out.VersionId = tok
	}
	a.Secrets = append(a.Secrets, sec)
	return out, nil
}

func (s *Sim) smPutSecretValue(c *call, body []byte) (any, error) {
	var in struct {
		SecretId           string
		ClientRequestToken string
		SecretString       *string
		SecretBinary       []byte
		VersionStages      []string
		RotationToken      string
	}
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	val := smValue{in.SecretString, in.SecretBinary}
	if !val.given() {
		return nil, smInvalidParam("You must provide either SecretString or SecretBinary.")
	}
	for _, e := range []*apiError{smCheckToken(in.ClientRequestToken), val.check()} {
		if e != nil {
			return nil, e
		}
	}
	stages := in.VersionStages
	if len(stages) == 0 {
		stages = []string{stageCurrent}
	}
	if len(stages) > 20 {
		return nil, smConstraint("Value at 'versionStages' failed to satisfy constraint: Member must have length less than or equal to 20")
	}
	for _, st := range stages {
		if len(st) < 1 || len(st) > 256 {
			return nil, smConstraint("Value at 'versionStages' failed to satisfy constraint: a staging label has 1 to 256 characters")
		}
	}
	a, sec, err := s.smLive(c, in.SecretId)
	if err != nil {
		return nil, err
	}
	if v := smVersion(sec, in.ClientRequestToken); v != nil && in.ClientRequestToken != "" {
		if !val.same(v) {
			return nil, smExists("You can't modify an existing version, you can only create a new version.")
		}
		return smNamed{ARN: secretARN(a, sec), Name: sec.Name, VersionId: v.ID, VersionStages: slices.Clone(v.Stages)}, nil
	}
	now := s.smStamp()
	tok := or(in.ClientRequestToken, uuidOf(fmt.Sprintf("%s/version/%d", secretARN(a, sec), s.nextID())))
	v := val.version(tok, now)
	sec.Versions = append(sec.Versions, v)
	for _, st := range slices.Compact(slices.Sorted(slices.Values(stages))) {
		smMoveStage(sec, st, v)
	}
	sec.Changed = now
	smPrune(sec)
	return smNamed{ARN: secretARN(a, sec), Name: sec.Name, VersionId: v.ID, VersionStages: slices.Clone(v.Stages)}, nil
}

func (s *Sim) smGetSecretValue(c *call, body []byte) (any, error) {
	var in struct {
		SecretId     string
		VersionId    string
		VersionStage string
	}
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	a, sec, err := s.smLive(c, in.SecretId)
	if err != nil {
		return nil, err
	}
	var v *SecretVersion
	switch {
	case in.VersionId != "":
		v = smVersion(sec, in.VersionId)
		if v == nil {
			return nil, errf(kindNotFound, "ResourceNotFoundException", "Secrets Manager can't find the specified secret value for VersionId: %s", in.VersionId)
		}
		if in.VersionStage != "" && !slices.Contains(v.Stages, in.VersionStage) {
			return nil, errf(kindNotFound, "ResourceNotFoundException", "Secrets Manager can't find the specified secret value for VersionId: %s and staging label: %s", in.VersionId, in.VersionStage)
		}
	default:
		stage := or(in.VersionStage, stageCurrent)
		if v = smHolder(sec, stage); v == nil {
			return nil, errf(kindNotFound, "ResourceNotFoundException", "Secrets Manager can't find the specified secret value for staging label: %s", stage)
		}
	}
	now := s.smStamp()
	sec.Accessed = &now
	out := struct {
		ARN           string
		Name          string
		VersionId     string
		SecretString  *string `json:",omitempty"`
		SecretBinary  []byte  `json:",omitempty"`
		VersionStages []string
		CreatedDate   *awsEpoch
	}{ARN: secretARN(a, sec), Name: sec.Name, VersionId: v.ID, VersionStages: slices.Clone(v.Stages), CreatedDate: epochOf(v.Created)}
	if v.Binary != nil {
		out.SecretBinary = v.Binary
	} else {
		out.SecretString = &v.String
	}
	if out.VersionStages == nil {
		out.VersionStages = []string{}
	}
	return out, nil
}

// smEntry is a secret as DescribeSecret (VersionIdsToStages) and ListSecrets
// (SecretVersionsToStages) answer it.
type smEntry struct {
	ARN                    string
	Name                   string
	Description            string              `json:",omitempty"`
	KmsKeyId               string              `json:",omitempty"`
	CreatedDate            *awsEpoch           `json:",omitempty"`
	LastChangedDate        *awsEpoch           `json:",omitempty"`
	LastAccessedDate       *awsEpoch           `json:",omitempty"`
	DeletedDate            *awsEpoch           `json:",omitempty"`
	Tags                   []smTag             `json:",omitempty"`
	VersionIdsToStages     map[string][]string `json:",omitempty"`
	SecretVersionsToStages map[string][]string `json:",omitempty"`
}

func smEntryOf(a *Account, sec *Secret) smEntry {
	return smEntry{ARN: secretARN(a, sec), Name: sec.Name, Description: sec.Description, KmsKeyId: sec.KMSKeyID,
		CreatedDate: epochOf(sec.Created), LastChangedDate: epochOf(sec.Changed), LastAccessedDate: smDay(sec.Accessed),
		DeletedDate: smOptTime(sec.Deleted), Tags: smTagList(sec.Tags)}
}

func (s *Sim) smDescribeSecret(c *call, body []byte) (any, error) {
	var in struct{ SecretId string }
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	a, sec, err := s.smFind(c, in.SecretId)
	if err != nil {
		return nil, err
	}
	e := smEntryOf(a, sec)
	e.VersionIdsToStages = smStagesMap(sec)
	return e, nil
}

func (s *Sim) smListSecrets(c *call, body []byte) (any, error) {
	var in struct {
		Filters []struct {
			Key    string
			Values []string
		}
		IncludePlannedDeletion bool
		MaxResults             *int
		NextToken              string
		SortBy                 string
		SortOrder              string
	}
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	size, err := smPageSize(in.MaxResults)
	if err != nil {
		return nil, err
	}
	for _, f := range in.Filters {
		if !slices.Contains([]string{"description", "name", "tag-key", "tag-value", "primary-region", "owning-service", "all"}, f.Key) {
			return nil, smInvalidParam("Invalid filter key %q: use description, name, tag-key, tag-value, primary-region, owning-service or all", f.Key)
		}
		if len(f.Values) == 0 || len(f.Values) > 10 {
			return nil, smInvalidParam("A filter takes 1 to 10 values.")
		}
	}
	a, err := s.smAccount(c)
	if err != nil {
		return nil, err
	}
	var list []*Secret
	for _, sec := range a.Secrets {
		if sec.Region != c.Region || sec.Deleted != nil && !in.IncludePlannedDeletion {
			continue
		}
		ok := true
		for _, f := range in.Filters {
			ok = ok && smFilterMatches(sec, f.Key, f.Values)
		}
		if ok {
			list = append(list, sec)
		}
	}
	var less func(x, y *Secret) bool
	switch in.SortBy {
	case "name":
		less = func(x, y *Secret) bool { return x.Name < y.Name }
	case "last-changed-date":
		less = func(x, y *Secret) bool { return x.Changed.Before(y.Changed) }
	case "last-accessed-date":
		less = func(x, y *Secret) bool { return smDayOf(x.Accessed).Before(smDayOf(y.Accessed)) }
	default: // created-date; secrets are kept in their creation order
	}
	if less != nil {
		sort.SliceStable(list, func(i, j int) bool { return less(list[i], list[j]) })
	}
	if in.SortOrder == "desc" {
		slices.Reverse(list)
	}
	start, end, next, err := smPage(in.NextToken, len(list), size)
	if err != nil {
		return nil, err
	}
	out := struct {
		SecretList []smEntry
		NextToken  string `json:",omitempty"`
	}{SecretList: []smEntry{}, NextToken: next}
	for _, sec := range list[start:end] {
		e := smEntryOf(a, sec)
		e.SecretVersionsToStages = smStagesMap(sec)
		out.SecretList = append(out.SecretList, e)
	}
	return out, nil
}

// smPageSize is a list call's MaxResults: 1 to 100, 100 when not given.
func smPageSize(maxResults *int) (int, error) {
	if maxResults == nil {
		return 100, nil
	}
	if *maxResults < 1 || *maxResults > 100 {
		return 0, smConstraint("Value '%d' at 'maxResults' failed to satisfy constraint: Member must have value between 1 and 100", *maxResults)
	}
	return *maxResults, nil
}

// smPage is the page [start, end) of a list of n items that a list call's NextToken and
// page size ask for, and the token of the page after it ("" for none).
func smPage(token string, n, size int) (start, end int, next string, err error) {
	off, ok := offsetFromToken(token)
	if !ok {
		return 0, 0, "", errf(kindInvalid, "InvalidNextTokenException", "The NextToken value is invalid.")
	}
	start, end, next = offsetWindow(n, off, size)
	return start, end, next, nil
}

func smDayOf(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC().Truncate(24 * time.Hour)
}

// smFilterMatches applies one ListSecrets filter: a prefix match on any of its values, a
// value starting with "!" excluding what it matches.
func smFilterMatches(sec *Secret, key string, values []string) bool {
	var fields []string
	add := func(k string) {
		switch k {
		case "name":
			fields = append(fields, sec.Name)
		case "description":
			fields = append(fields, sec.Description)
		case "tag-key":
			for t := range sec.Tags {
				fields = append(fields, t)
			}
		case "tag-value":
			for _, v := range sec.Tags {
				fields = append(fields, v)
			}
		}
	}
	if key == "all" {
		for _, k := range []string{"name", "description", "tag-key", "tag-value"} {
			add(k)
		}
	} else {
		add(key)
	}
	match := func(prefix string) bool {
		return slices.ContainsFunc(fields, func(f string) bool { return strings.HasPrefix(f, prefix) })
	}
	positive, hit := false, false
	for _, v := range values {
		if neg, ok := strings.CutPrefix(v, "!"); ok {
			if match(neg) {
				return false
			}
			continue
		}
		positive = true
		hit = hit || match(v)
	}
	return hit || !positive
}

func (s *Sim) smListSecretVersionIds(c *call, body []byte) (any, error) {
	var in struct {
		SecretId          string
		IncludeDeprecated bool
		MaxResults        *int
		NextToken         string
	}
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	size, err := smPageSize(in.MaxResults)
	if err != nil {
		return nil, err
	}
	a, sec, err := s.smFind(c, in.SecretId)
	if err != nil {
		return nil, err
	}
	type entry struct {
		VersionId     string
		VersionStages []string `json:",omitempty"`
		CreatedDate   *awsEpoch
	}
	var list []entry
	for _, v := range sec.Versions {
		if len(v.Stages) > 0 || in.IncludeDeprecated {
			list = append(list, entry{v.ID, slices.Clone(v.Stages), epochOf(v.Created)})
		}
	}
	start, end, next, err := smPage(in.NextToken, len(list), size)
	if err != nil {
		return nil, err
	}
	return struct {
		ARN       string
		Name      string
		Versions  []entry
		NextToken string `json:",omitempty"`
	}{secretARN(a, sec), sec.Name, append([]entry{}, list[start:end]...), next}, nil
}

// smUpdateSecretVersionStage moves a staging label: to MoveToVersionId, from
// RemoveFromVersionId, which must be named when the label is on another version.
// AWSCURRENT can be moved but not removed.
func (s *Sim) smUpdateSecretVersionStage(c *call, body []byte) (any, error) {
	var in struct {
		SecretId            string
		VersionStage        string
		MoveToVersionId     string
		RemoveFromVersionId string
	}
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	if len(in.VersionStage) < 1 || len(in.VersionStage) > 256 {
		return nil, smConstraint("Value at 'versionStage' failed to satisfy constraint: Member must have length between 1 and 256")
	}
	a, sec, err := s.smLive(c, in.SecretId)
	if err != nil {
		return nil, err
	}
	if in.MoveToVersionId == "" && in.RemoveFromVersionId == "" {
		return nil, smInvalidParam("You must specify MoveToVersionId, RemoveFromVersionId or both.")
	}
	var to, from *SecretVersion
	if in.MoveToVersionId != "" {
		if to = smVersion(sec, in.MoveToVersionId); to == nil {
			return nil, errf(kindNotFound, "ResourceNotFoundException", "Secrets Manager can't find the specified secret version: %s", in.MoveToVersionId)
		}
	}
	if in.RemoveFromVersionId != "" {
		if from = smVersion(sec, in.RemoveFromVersionId); from == nil {
			return nil, errf(kindNotFound, "ResourceNotFoundException", "Secrets Manager can't find the specified secret version: %s", in.RemoveFromVersionId)
		}
	}
	holder := smHolder(sec, in.VersionStage)
	switch {
	case from != nil && from != holder:
		return nil, smInvalidParam("The staging label %s is not attached to version %s.", in.VersionStage, from.ID)
	case to != nil && holder != nil && holder != to && from == nil:
		return nil, smInvalidParam("The parameter RemoveFromVersionId can't be empty. Staging label %s is currently attached to version %s, so you must explicitly reference that version in RemoveFromVersionId.", in.VersionStage, holder.ID)
	case to == nil && in.VersionStage == stageCurrent:
		return nil, smInvalidParam("You can only move staging label %s to a different secret version. It can't be completely removed.", stageCurrent)
	}
	smMoveStage(sec, in.VersionStage, to)
	sec.Changed = s.smStamp()
	return smNamed{ARN: secretARN(a, sec), Name: sec.Name}, nil
}

func (s *Sim) smDeleteSecret(c *call, body []byte) (any, error) {
	var in struct {
		SecretId                   string
		RecoveryWindowInDays       *int64
		ForceDeleteWithoutRecovery bool
	}
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	days := int64(30)
	if in.RecoveryWindowInDays != nil {
		if in.ForceDeleteWithoutRecovery {
			return nil, smInvalidParam("You can't use ForceDeleteWithoutRecovery in conjunction with RecoveryWindowInDays.")
		}
		if days = *in.RecoveryWindowInDays; days < 7 || days > 30 {
			return nil, smInvalidParam("The RecoveryWindowInDays value must be between 7 and 30 days (inclusive).")
		}
	}
	a, sec, err := s.smFind(c, in.SecretId)
	if err != nil {
		return nil, err
	}
	now := s.smStamp()
	out := struct {
		ARN          string
		Name         string
		DeletionDate *awsEpoch
	}{ARN: secretARN(a, sec), Name: sec.Name}
	if in.ForceDeleteWithoutRecovery {
		a.Secrets = slices.DeleteFunc(a.Secrets, func(x *Secret) bool { return x == sec })
		out.DeletionDate = epochOf(now)
		return out, nil
	}
	if sec.Deleted != nil {
		return nil, smInvalidRequest("You can't perform this operation on the secret because it was already scheduled for deletion.")
	}
	purge := now.Add(time.Duration(days) * 24 * time.Hour)
	sec.Deleted, sec.Purge = &now, &purge
	out.DeletionDate = epochOf(purge)
	return out, nil
}

// smRestoreSecret cancels a scheduled deletion; a secret not marked is left as it is.
func (s *Sim) smRestoreSecret(c *call, body []byte) (any, error) {
	var in struct{ SecretId string }
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	a, sec, err := s.smFind(c, in.SecretId)
	if err != nil {
		return nil, err
	}
	sec.Deleted, sec.Purge = nil, nil
	return smNamed{ARN: secretARN(a, sec), Name: sec.Name}, nil
}

func (s *Sim) smTagResource(c *call, body []byte) (any, error) {
	var in struct {
		SecretId string
		Tags     []smTag
	}
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	_, sec, err := s.smLive(c, in.SecretId)
	if err != nil {
		return nil, err
	}
	if err := smCheckTags(in.Tags, sec.Tags); err != nil {
		return nil, err
	}
	for _, t := range in.Tags {
		if sec.Tags == nil {
			sec.Tags = map[string]string{}
		}
		sec.Tags[t.Key] = t.Value
	}
	return nil, nil
}

func (s *Sim) smUntagResource(c *call, body []byte) (any, error) {
	var in struct {
		SecretId string
		TagKeys  []string
	}
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	_, sec, err := s.smLive(c, in.SecretId)
	if err != nil {
		return nil, err
	}
	for _, k := range in.TagKeys {
		delete(sec.Tags, k)
	}
	return nil, nil
}
