package cloudsim

import (
	"context"
	"errors"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

const smTestAcct = "111111111111"

// smTestToken makes a ClientRequestToken of the length Secrets Manager requires.
func smTestToken(n string) string { return strings.Repeat("0", 32-len(n)) + n }

// smClock is a simulator clock a test moves; the simulator reads it from its goroutines.
type smClock struct{ ns atomic.Int64 }

func newSMClock(t time.Time) *smClock {
	c := &smClock{}
	c.ns.Store(t.UnixNano())
	return c
}

func (c *smClock) Now() time.Time      { return time.Unix(0, c.ns.Load()).UTC() }
func (c *smClock) Add(d time.Duration) { c.ns.Add(int64(d)) }
func (c *smClock) Set(t time.Time)     { c.ns.Store(t.UnixNano()) }
func smTestWorld() *World {
	return &World{AWS: AWS{Accounts: []*Account{{ID: smTestAcct, Regions: []string{"us-east-1", "eu-west-1"}}}}}
}
func smClient(cfg aws.Config) *secretsmanager.Client { return secretsmanager.NewFromConfig(cfg) }

var smTestNow = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

// smWantErr checks that err is the Secrets Manager error code, answered with HTTP 400 as
// every AWS JSON client error is.
func smWantErr(t *testing.T, err error, code string) {
	t.Helper()
	if got := sdkErrCode(err); got != code {
		t.Fatalf("error %v (code %q), want %s", err, got, code)
	}
	var re *smithyhttp.ResponseError
	if !errors.As(err, &re) || re.HTTPStatusCode() != 400 {
		t.Fatalf("error %v: want HTTP status 400", err)
	}
}

// TestSecretsManager_versionStages creates a secret, puts two new values, reads each
// version by stage and by id, and moves AWSCURRENT back as a rollback does.
func TestSecretsManager_versionStages(t *testing.T) {
	sim, cfg := sdkSim(t, smTestWorld(), Options{Now: func() time.Time { return smTestNow }})
	c := smClient(cfg)
	ctx := context.Background()
	const name = "warden/iam/111111111111/alice"
	v1, v2, v3 := smTestToken("1"), smTestToken("2"), smTestToken("3")
	created, err := c.CreateSecret(ctx, &secretsmanager.CreateSecretInput{Name: aws.String(name), SecretString: aws.String("key-1"),
		ClientRequestToken: aws.String(v1), Description: aws.String("alice's access key"),
		Tags: []smtypes.Tag{{Key: aws.String("owner"), Value: aws.String("warden")}}})
	if err != nil {
		t.Fatal(err)
	}
	arn := aws.ToString(created.ARN)
	if !regexp.MustCompile(`^arn:aws:secretsmanager:us-east-1:111111111111:secret:`+name+`-[A-Za-z0-9]{6}$`).MatchString(arn) ||
		aws.ToString(created.VersionId) != v1 || aws.ToString(created.Name) != name {
		t.Fatalf("CreateSecret = %s %s %s", arn, aws.ToString(created.Name), aws.ToString(created.VersionId))
	}
	for _, v := range []struct{ token, value string }{{v2, "key-2"}, {v3, "key-3"}} {
		out, err := c.PutSecretValue(ctx, &secretsmanager.PutSecretValueInput{SecretId: aws.String(name), SecretString: aws.String(v.value),
			ClientRequestToken: aws.String(v.token)})
		if err != nil || aws.ToString(out.VersionId) != v.token || !slices.Equal(out.VersionStages, []string{stageCurrent}) || aws.ToString(out.ARN) != arn {
			t.Fatalf("PutSecretValue(%s) = %+v, %v", v.value, out, err)
		}
	}
	stages := func(t *testing.T) map[string][]string {
		t.Helper()
		d, err := c.DescribeSecret(ctx, &secretsmanager.DescribeSecretInput{SecretId: aws.String(arn)})
		if err != nil {
			t.Fatal(err)
		}
		return d.VersionIdsToStages
	}
	// The first version lost its labels: deprecated, left out of VersionIdsToStages.
	if got, want := stages(t), map[string][]string{v3: {stageCurrent}, v2: {stagePrevious}}; !maps.EqualFunc(got, want, slices.Equal) {
		t.Errorf("stages after two puts = %v, want %v", got, want)
	}

	tests := []struct {
		name           string
		in             secretsmanager.GetSecretValueInput
		value, version string
		stages         []string
		code           string
	}{
		{"default is AWSCURRENT", secretsmanager.GetSecretValueInput{}, "key-3", v3, []string{stageCurrent}, ""},
		{"AWSPREVIOUS", secretsmanager.GetSecretValueInput{VersionStage: aws.String(stagePrevious)}, "key-2", v2, []string{stagePrevious}, ""},
		{"deprecated version by id", secretsmanager.GetSecretValueInput{VersionId: aws.String(v1)}, "key-1", v1, []string{}, ""},
		{"id and its stage", secretsmanager.GetSecretValueInput{VersionId: aws.String(v2), VersionStage: aws.String(stagePrevious)}, "key-2", v2, []string{stagePrevious}, ""},
		{"id and another stage", secretsmanager.GetSecretValueInput{VersionId: aws.String(v2), VersionStage: aws.String(stageCurrent)}, "", "", nil, "ResourceNotFoundException"},
		{"stage nobody has", secretsmanager.GetSecretValueInput{VersionStage: aws.String("AWSPENDING")}, "", "", nil, "ResourceNotFoundException"},
		{"unknown version", secretsmanager.GetSecretValueInput{VersionId: aws.String(smTestToken("9"))}, "", "", nil, "ResourceNotFoundException"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, id := range []string{name, arn, "arn:aws:secretsmanager:us-east-1:111111111111:secret:" + name} {
				in := tc.in
				in.SecretId = aws.String(id)
				out, err := c.GetSecretValue(ctx, &in)
				if tc.code != "" {
					smWantErr(t, err, tc.code)
					continue
				}
				if err != nil {
					t.Fatalf("by %s: %v", id, err)
				}
				if aws.ToString(out.SecretString) != tc.value || aws.ToString(out.VersionId) != tc.version ||
					!slices.Equal(out.VersionStages, tc.stages) || aws.ToString(out.ARN) != arn || !aws.ToTime(out.CreatedDate).Equal(smTestNow) {
					t.Errorf("by %s: %s %s %v %s, want %s %s %v", id, aws.ToString(out.SecretString), aws.ToString(out.VersionId),
						out.VersionStages, aws.ToString(out.ARN), tc.value, tc.version, tc.stages)
				}
			}
		})
	}

	ids := func(deprecated bool) []string {
		t.Helper()
		out, err := c.ListSecretVersionIds(ctx, &secretsmanager.ListSecretVersionIdsInput{SecretId: aws.String(name), IncludeDeprecated: aws.Bool(deprecated)})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, v := range out.Versions {
			ids = append(ids, aws.ToString(v.VersionId))
		}
		return ids
	}
	if got := ids(false); !slices.Equal(got, []string{v2, v3}) {
		t.Errorf("staged versions %v", got)
	}
	if got := ids(true); !slices.Equal(got, []string{v1, v2, v3}) {
		t.Errorf("all versions %v", got)
	}

	// A rollback: AWSCURRENT back to the previous version, then the new one deprecated.
	move := func(stage, to, from string) error {
		in := &secretsmanager.UpdateSecretVersionStageInput{SecretId: aws.String(name), VersionStage: aws.String(stage)}
		if to != "" {
			in.MoveToVersionId = aws.String(to)
		}
		if from != "" {
			in.RemoveFromVersionId = aws.String(from)
		}
		_, err := c.UpdateSecretVersionStage(ctx, in)
		return err
	}
	steps := []struct {
		name       string
		stage      string
		to, from   string
		code       string
		wantStages map[string][]string
	}{
		{"moving a label another version has needs RemoveFromVersionId", stageCurrent, v2, "", "InvalidParameterException", nil},
		{"RemoveFromVersionId must have the label", stageCurrent, v2, v1, "InvalidParameterException", nil},
		{"AWSCURRENT cannot be removed", stageCurrent, "", v3, "InvalidParameterException", nil},
		{"unknown version", stageCurrent, smTestToken("9"), v3, "ResourceNotFoundException", nil},
		{"AWSCURRENT back; AWSPREVIOUS follows", stageCurrent, v2, v3, "", map[string][]string{v2: {stageCurrent}, v3: {stagePrevious}}},
		{"the new version deprecated", stagePrevious, "", v3, "", map[string][]string{v2: {stageCurrent}}},
		{"a label of one's own", "AWSPENDING", v3, "", "", map[string][]string{v2: {stageCurrent}, v3: {"AWSPENDING"}}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			err := move(st.stage, st.to, st.from)
			if st.code != "" {
				smWantErr(t, err, st.code)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := stages(t); !maps.EqualFunc(got, st.wantStages, slices.Equal) {
				t.Errorf("stages %v, want %v", got, st.wantStages)
			}
		})
	}
	if out, err := c.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(name)}); err != nil || aws.ToString(out.SecretString) != "key-2" {
		t.Errorf("after the rollback AWSCURRENT = %+v, %v; want key-2", out, err)
	}

	// Every write is counted as one; reads are not.
	writes := sim.Writes()
	want := map[string]int{"secretsmanager:CreateSecret": 1, "secretsmanager:PutSecretValue": 2, "secretsmanager:UpdateSecretVersionStage": len(steps)}
	if !maps.Equal(writes, want) {
		t.Errorf("writes %v, want %v", writes, want)
	}
	if n := sim.Calls()["secretsmanager:GetSecretValue"].Calls; n == 0 {
		t.Error("GetSecretValue calls not counted")
	}
}

// TestSecretsManager_idempotentTokens: a request repeated with its ClientRequestToken
// does nothing more; the same token with another value is refused.
func TestSecretsManager_idempotentTokens(t *testing.T) {
	_, cfg := sdkSim(t, smTestWorld(), Options{Now: func() time.Time { return smTestNow }})
	c := smClient(cfg)
	ctx := context.Background()
	const name = "app/db"
	t1, t2 := smTestToken("a1"), smTestToken("a2")
	create := func(token, value string) (*secretsmanager.CreateSecretOutput, error) {
		return c.CreateSecret(ctx, &secretsmanager.CreateSecretInput{Name: aws.String(name), SecretString: aws.String(value), ClientRequestToken: aws.String(token)})
	}
	put := func(token string, value any) (*secretsmanager.PutSecretValueOutput, error) {
		in := &secretsmanager.PutSecretValueInput{SecretId: aws.String(name), ClientRequestToken: aws.String(token)}
		switch v := value.(type) {
		case string:
			in.SecretString = aws.String(v)
		case []byte:
			in.SecretBinary = v
		}
		return c.PutSecretValue(ctx, in)
	}
	first, err := create(t1, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := put(t2, "s2"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		call    func() (version string, err error)
		code    string
		version string
	}{
		{"CreateSecret again with its token and value", func() (string, error) {
			out, err := create(t1, "s1")
			return aws.ToString(out.VersionId), err
		}, "", t1},
		{"CreateSecret again with another token", func() (string, error) {
			_, err := create(smTestToken("a3"), "s1")
			return "", err
		}, "ResourceExistsException", ""},
		{"CreateSecret again with its token and another value", func() (string, error) {
			_, err := create(t1, "other")
			return "", err
		}, "ResourceExistsException", ""},
		{"PutSecretValue again with its token and value", func() (string, error) {
			out, err := put(t2, "s2")
			return aws.ToString(out.VersionId), err
		}, "", t2},
		{"PutSecretValue with a token in use and another value", func() (string, error) {
			_, err := put(t2, "s3")
			return "", err
		}, "ResourceExistsException", ""},
		{"PutSecretValue with a binary value for a string version", func() (string, error) {
			_, err := put(t2, []byte("s2"))
			return "", err
		}, "ResourceExistsException", ""},
		{"PutSecretValue without a value", func() (string, error) {
			_, err := put(smTestToken("a4"), nil)
			return "", err
		}, "InvalidParameterException", ""},
		{"a token too short", func() (string, error) {
			_, err := put("short", "s4")
			return "", err
		}, "ValidationException", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := tc.call()
			if tc.code != "" {
				smWantErr(t, err, tc.code)
				return
			}
			if err != nil || v != tc.version {
				t.Fatalf("version %q, %v; want %q", v, err, tc.version)
			}
		})
	}
	// Nothing above changed the secret: two versions, s2 current.
	d, err := c.DescribeSecret(ctx, &secretsmanager.DescribeSecretInput{SecretId: first.ARN})
	if want := map[string][]string{t2: {stageCurrent}, t1: {stagePrevious}}; err != nil || !maps.EqualFunc(d.VersionIdsToStages, want, slices.Equal) {
		t.Errorf("stages %v, %v; want %v", d.VersionIdsToStages, err, want)
	}
	// The SDK fills in a fresh token for each call that gives none: two new versions.
	for _, v := range []string{"s5", "s6"} {
		if _, err := c.PutSecretValue(ctx, &secretsmanager.PutSecretValueInput{SecretId: aws.String(name), SecretString: aws.String(v)}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := c.ListSecretVersionIds(ctx, &secretsmanager.ListSecretVersionIdsInput{SecretId: aws.String(name), IncludeDeprecated: aws.Bool(true)})
	if err != nil || len(all.Versions) != 4 {
		t.Errorf("versions after two puts without a token: %+v, %v; want 4", all, err)
	}
	// A binary secret reads back as bytes.
	bin := []byte{0, 1, 2, 0xff}
	if _, err := c.CreateSecret(ctx, &secretsmanager.CreateSecretInput{Name: aws.String("app/bin"), SecretBinary: bin}); err != nil {
		t.Fatal(err)
	}
	got, err := c.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String("app/bin")})
	if err != nil || !slices.Equal(got.SecretBinary, bin) || got.SecretString != nil {
		t.Errorf("binary secret = %+v, %v", got, err)
	}
}

// TestSecretsManager_missingAndDeleted: a secret that is not there is not found; one
// marked for deletion refuses reads and writes until restored, and is gone once its
// recovery window has passed.
func TestSecretsManager_missingAndDeleted(t *testing.T) {
	clock := newSMClock(smTestNow)
	_, cfg := sdkSim(t, smTestWorld(), Options{Now: clock.Now})
	c := smClient(cfg)
	ctx := context.Background()
	created, err := c.CreateSecret(ctx, &secretsmanager.CreateSecretInput{Name: aws.String("gone"), SecretString: aws.String("x")})
	if err != nil {
		t.Fatal(err)
	}
	arn := aws.ToString(created.ARN)
	get := func(id string) error {
		_, err := c.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(id)})
		return err
	}
	euClient := secretsmanager.NewFromConfig(cfg, func(o *secretsmanager.Options) { o.Region = "eu-west-1" })
	offClient := secretsmanager.NewFromConfig(cfg, func(o *secretsmanager.Options) { o.Region = "ap-south-1" })
	notFound := []struct {
		name string
		err  func() error
		code string
	}{
		{"unknown name", func() error { return get("nope") }, "ResourceNotFoundException"},
		{"ARN of another account", func() error { return get(strings.Replace(arn, smTestAcct, "222222222222", 1)) }, "ResourceNotFoundException"},
		{"another region's secret", func() error {
			_, err := euClient.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String("gone")})
			return err
		}, "ResourceNotFoundException"},
		{"a region the account has not enabled", func() error {
			_, err := offClient.ListSecrets(ctx, &secretsmanager.ListSecretsInput{})
			return err
		}, "UnrecognizedClientException"},
		{"put to an unknown secret", func() error {
			_, err := c.PutSecretValue(ctx, &secretsmanager.PutSecretValueInput{SecretId: aws.String("nope"), SecretString: aws.String("y")})
			return err
		}, "ResourceNotFoundException"},
		{"force and a recovery window", func() error {
			_, err := c.DeleteSecret(ctx, &secretsmanager.DeleteSecretInput{SecretId: aws.String("gone"), ForceDeleteWithoutRecovery: aws.Bool(true), RecoveryWindowInDays: aws.Int64(7)})
			return err
		}, "InvalidParameterException"},
		{"a recovery window too short", func() error {
			_, err := c.DeleteSecret(ctx, &secretsmanager.DeleteSecretInput{SecretId: aws.String("gone"), RecoveryWindowInDays: aws.Int64(3)})
			return err
		}, "InvalidParameterException"},
	}
	for _, tc := range notFound {
		t.Run(tc.name, func(t *testing.T) { smWantErr(t, tc.err(), tc.code) })
	}

	del, err := c.DeleteSecret(ctx, &secretsmanager.DeleteSecretInput{SecretId: aws.String(arn), RecoveryWindowInDays: aws.Int64(7)})
	if err != nil || !aws.ToTime(del.DeletionDate).Equal(smTestNow.AddDate(0, 0, 7)) {
		t.Fatalf("DeleteSecret = %+v, %v", del, err)
	}
	marked := []struct {
		name string
		err  func() error
		code string
	}{
		{"get", func() error { return get("gone") }, "InvalidRequestException"},
		{"put", func() error {
			_, err := c.PutSecretValue(ctx, &secretsmanager.PutSecretValueInput{SecretId: aws.String("gone"), SecretString: aws.String("y")})
			return err
		}, "InvalidRequestException"},
		{"create the name again", func() error {
			_, err := c.CreateSecret(ctx, &secretsmanager.CreateSecretInput{Name: aws.String("gone"), SecretString: aws.String("y")})
			return err
		}, "InvalidRequestException"},
		{"delete again", func() error {
			_, err := c.DeleteSecret(ctx, &secretsmanager.DeleteSecretInput{SecretId: aws.String("gone")})
			return err
		}, "InvalidRequestException"},
	}
	for _, tc := range marked {
		t.Run("marked: "+tc.name, func(t *testing.T) { smWantErr(t, tc.err(), tc.code) })
	}
	d, err := c.DescribeSecret(ctx, &secretsmanager.DescribeSecretInput{SecretId: aws.String("gone")})
	if err != nil || !aws.ToTime(d.DeletedDate).Equal(smTestNow) {
		t.Errorf("DescribeSecret of a marked secret = %+v, %v; want its DeletedDate", d, err)
	}
	names := func(planned bool) int {
		out, err := c.ListSecrets(ctx, &secretsmanager.ListSecretsInput{IncludePlannedDeletion: aws.Bool(planned)})
		if err != nil {
			t.Fatal(err)
		}
		return len(out.SecretList)
	}
	if names(false) != 0 || names(true) != 1 {
		t.Errorf("ListSecrets lists %d, with planned deletions %d; want 0 and 1", names(false), names(true))
	}
	if _, err := c.RestoreSecret(ctx, &secretsmanager.RestoreSecretInput{SecretId: aws.String("gone")}); err != nil {
		t.Fatal(err)
	}
	if err := get("gone"); err != nil {
		t.Errorf("get after RestoreSecret: %v", err)
	}

	// Once the recovery window has passed, the secret is gone and its name free.
	if _, err := c.DeleteSecret(ctx, &secretsmanager.DeleteSecretInput{SecretId: aws.String("gone"), RecoveryWindowInDays: aws.Int64(7)}); err != nil {
		t.Fatal(err)
	}
	clock.Add(7 * 24 * time.Hour)
	smWantErr(t, get("gone"), "ResourceNotFoundException")
	again, err := c.CreateSecret(ctx, &secretsmanager.CreateSecretInput{Name: aws.String("gone"), SecretString: aws.String("z")})
	if err != nil || aws.ToString(again.ARN) == arn {
		t.Errorf("CreateSecret after the purge = %+v, %v; want a new ARN", again, err)
	}
	// Forced: gone at once.
	if _, err := c.DeleteSecret(ctx, &secretsmanager.DeleteSecretInput{SecretId: aws.String("gone"), ForceDeleteWithoutRecovery: aws.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	_, err = c.DescribeSecret(ctx, &secretsmanager.DescribeSecretInput{SecretId: aws.String("gone")})
	smWantErr(t, err, "ResourceNotFoundException")
}

// TestSecretsManager_listSecrets pages through the secrets of a region, with filters and
// sort orders.
func TestSecretsManager_listSecrets(t *testing.T) {
	clock := newSMClock(smTestNow)
	_, cfg := sdkSim(t, smTestWorld(), Options{Now: clock.Now})
	c := smClient(cfg)
	ctx := context.Background()
	all := []string{"warden/iam/a", "warden/iam/b", "app/db", "warden/iam/c", "app/api", "warden/tls/d", "other"}
	for i, n := range all {
		clock.Add(time.Minute)
		in := &secretsmanager.CreateSecretInput{Name: aws.String(n), SecretString: aws.String("v")}
		if i%2 == 0 {
			in.Tags = []smtypes.Tag{{Key: aws.String("team"), Value: aws.String("sec")}}
		}
		if _, err := c.CreateSecret(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	// A secret in another region is not listed.
	if _, err := secretsmanager.NewFromConfig(cfg, func(o *secretsmanager.Options) { o.Region = "eu-west-1" }).
		CreateSecret(ctx, &secretsmanager.CreateSecretInput{Name: aws.String("warden/iam/eu")}); err != nil {
		t.Fatal(err)
	}
	filter := func(key smtypes.FilterNameStringType, values ...string) []smtypes.Filter {
		return []smtypes.Filter{{Key: key, Values: values}}
	}
	tests := []struct {
		name string
		in   secretsmanager.ListSecretsInput
		want []string
	}{
		{"all, in creation order", secretsmanager.ListSecretsInput{}, all},
		{"name prefix", secretsmanager.ListSecretsInput{Filters: filter(smtypes.FilterNameStringTypeName, "warden/iam/")}, []string{"warden/iam/a", "warden/iam/b", "warden/iam/c"}},
		{"two prefixes", secretsmanager.ListSecretsInput{Filters: filter(smtypes.FilterNameStringTypeName, "app/", "other")}, []string{"app/db", "app/api", "other"}},
		{"negated", secretsmanager.ListSecretsInput{Filters: filter(smtypes.FilterNameStringTypeName, "!warden/")}, []string{"app/db", "app/api", "other"}},
		{"tag key", secretsmanager.ListSecretsInput{Filters: filter(smtypes.FilterNameStringTypeTagKey, "team")}, []string{"warden/iam/a", "app/db", "app/api", "other"}},
		{"two filters", secretsmanager.ListSecretsInput{Filters: append(filter(smtypes.FilterNameStringTypeTagValue, "sec"), filter(smtypes.FilterNameStringTypeAll, "warden")...)}, []string{"warden/iam/a"}},
		{"by name", secretsmanager.ListSecretsInput{SortBy: smtypes.SortByTypeName}, []string{"app/api", "app/db", "other", "warden/iam/a", "warden/iam/b", "warden/iam/c", "warden/tls/d"}},
		{"newest first", secretsmanager.ListSecretsInput{SortOrder: smtypes.SortOrderTypeDesc}, []string{"other", "warden/tls/d", "app/api", "warden/iam/c", "app/db", "warden/iam/b", "warden/iam/a"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			in.MaxResults = aws.Int32(2)
			p := secretsmanager.NewListSecretsPaginator(c, &in)
			var got []string
			pages := 0
			for p.HasMorePages() {
				page, err := p.NextPage(ctx)
				if err != nil {
					t.Fatal(err)
				}
				pages++
				for _, s := range page.SecretList {
					got = append(got, aws.ToString(s.Name))
					if len(s.SecretVersionsToStages) != 1 && aws.ToString(s.Name) != "warden/iam/eu" {
						t.Errorf("%s: versions to stages %v", aws.ToString(s.Name), s.SecretVersionsToStages)
					}
				}
			}
			if !slices.Equal(got, tc.want) || pages != max(1, (len(tc.want)+1)/2) {
				t.Errorf("listed %v in %d pages, want %v", got, pages, tc.want)
			}
		})
	}
	errs := []struct {
		name string
		in   secretsmanager.ListSecretsInput
		code string
	}{
		{"bad token", secretsmanager.ListSecretsInput{NextToken: aws.String("garbage")}, "InvalidNextTokenException"},
		{"too many per page", secretsmanager.ListSecretsInput{MaxResults: aws.Int32(101)}, "ValidationException"},
		{"unknown filter", secretsmanager.ListSecretsInput{Filters: filter("colour", "red")}, "InvalidParameterException"},
	}
	for _, tc := range errs {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.ListSecrets(ctx, &tc.in)
			smWantErr(t, err, tc.code)
		})
	}
}

// TestSecretsManager_worldFile: secrets may be declared in a world file, with a value or
// with versions; mistakes name the field.
func TestSecretsManager_worldFile(t *testing.T) {
	w, err := ParseWorld([]byte(`
aws:
  accounts:
    - id: "111111111111"
      regions: [eu-west-1]
      secrets:
        - name: prod/db
          region: eu-west-1
          string: '{"password":"hunter2"}'
          tags: {team: data}
        - name: prod/api
          region: eu-west-1
          suffix: AbC123
          versions:
            - {id: 11111111-1111-1111-1111-111111111111, string: old, stages: [AWSPREVIOUS]}
            - {id: 22222222-2222-2222-2222-222222222222, string: new, stages: [AWSCURRENT]}
`))
	if err != nil {
		t.Fatal(err)
	}
	_, cfg := sdkSim(t, w, Options{Now: func() time.Time { return smTestNow }})
	cfg.Region = "eu-west-1"
	c := smClient(cfg)
	ctx := context.Background()
	tests := []struct {
		id, stage, value string
		arn              *regexp.Regexp
	}{
		{"prod/db", "", `{"password":"hunter2"}`, regexp.MustCompile(`^arn:aws:secretsmanager:eu-west-1:111111111111:secret:prod/db-[A-Za-z0-9]{6}$`)},
		{"prod/api", "", "new", regexp.MustCompile(`^arn:aws:secretsmanager:eu-west-1:111111111111:secret:prod/api-AbC123$`)},
		{"arn:aws:secretsmanager:eu-west-1:111111111111:secret:prod/api-AbC123", stagePrevious, "old", regexp.MustCompile(`-AbC123$`)},
	}
	for _, tc := range tests {
		t.Run(tc.id+" "+tc.stage, func(t *testing.T) {
			in := &secretsmanager.GetSecretValueInput{SecretId: aws.String(tc.id)}
			if tc.stage != "" {
				in.VersionStage = aws.String(tc.stage)
			}
			out, err := c.GetSecretValue(ctx, in)
			if err != nil || aws.ToString(out.SecretString) != tc.value || !tc.arn.MatchString(aws.ToString(out.ARN)) {
				t.Errorf("GetSecretValue = %+v, %v", out, err)
			}
		})
	}

	bad := []struct {
		name, yaml, want string
	}{
		{"no region", `{name: a, string: x}`, "aws.accounts[0].secrets[0] (a): region is required"},
		{"twice", `{name: a, region: us-east-1}, {name: a, region: us-east-1}`, "secrets[1] (a): the name appears twice in us-east-1"},
		{"value and versions", `{name: a, region: us-east-1, string: x, versions: [{id: v, string: y}]}`, "not both"},
		{"a label on two versions", `{name: a, region: us-east-1, versions: [{id: v1, stages: [AWSCURRENT]}, {id: v2, stages: [AWSCURRENT]}]}`, "staging label AWSCURRENT is on two versions"},
		{"a bad name", `{name: "a b", region: us-east-1}`, "Invalid name"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseWorld([]byte(`{aws: {accounts: [{id: "111111111111", secrets: [` + tc.yaml + `]}]}}`))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParseWorld = %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// TestSecretsManager_faults: faults, rate limits and write-only faults apply to Secrets
// Manager, answered in its own codes.
func TestSecretsManager_faults(t *testing.T) {
	tests := []struct {
		name     string
		faults   []Fault
		readCode string // GetSecretValue
		putCode  string // PutSecretValue
	}{
		{"throttled", []Fault{{Service: "secretsmanager", ThrottleRate: 1}}, "ThrottlingException", "ThrottlingException"},
		{"denied", []Fault{{Service: "secretsmanager", AccessDenied: true}}, "AccessDeniedException", "AccessDeniedException"},
		{"writes denied", []Fault{{Service: "secretsmanager", Writes: true, AccessDenied: true}}, "", "AccessDeniedException"},
		{"down", []Fault{{Service: "secretsmanager", ErrorRate: 1}}, "InternalServiceError", "InternalServiceError"},
		{"another service's fault", []Fault{{Service: "acm", AccessDenied: true}}, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := smTestWorld()
			w.AWS.Accounts[0].Secrets = []*Secret{{Name: "s", Region: "us-east-1", String: "v"}}
			w.Faults = tc.faults
			sim, cfg := sdkSim(t, w, Options{Now: func() time.Time { return smTestNow }})
			cfg.Retryer = func() aws.Retryer { return aws.NopRetryer{} }
			c := smClient(cfg)
			ctx := context.Background()
			_, err := c.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String("s")})
			if got := sdkErrCode(err); got != tc.readCode {
				t.Errorf("GetSecretValue: %v, want code %q", err, tc.readCode)
			}
			_, err = c.PutSecretValue(ctx, &secretsmanager.PutSecretValueInput{SecretId: aws.String("s"), SecretString: aws.String("v2")})
			if got := sdkErrCode(err); got != tc.putCode {
				t.Errorf("PutSecretValue: %v, want code %q", err, tc.putCode)
			}
			if n := sim.Writes()["secretsmanager:PutSecretValue"]; n != 1 {
				t.Errorf("PutSecretValue counted as %d writes, want 1", n)
			}
		})
	}
}
