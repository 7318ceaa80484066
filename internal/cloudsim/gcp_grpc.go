package cloudsim

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	adminpb "cloud.google.com/go/iam/admin/apiv1/adminpb"
	recommenderpb "cloud.google.com/go/recommender/apiv1/recommenderpb"
	sccpb "cloud.google.com/go/securitycenter/apiv1/securitycenterpb"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// registerGRPC serves over gRPC the IAM admin API (google.iam.admin.v1.IAM: service
// accounts and their keys), the Recommender API's IAM recommender (gcp_recommender.go)
// and Security Command Center's sources and findings (scc.go).
// Calls reach them through grpcInterceptor, which applies faults and holds the
// simulator's lock.
func (s *Sim) registerGRPC(srv *grpc.Server) {
	adminpb.RegisterIAMServer(srv, &iamAdmin{s: s})
	recommenderpb.RegisterRecommenderServer(srv, &recommender{s: s})
	s.scc = &sccState{}
	sccpb.RegisterSecurityCenterServer(srv, &securityCenter{s: s})
}

// iamAdmin implements the service accounts and keys part of the IAM admin API; the rest
// (roles, SignBlob, …) answers Unimplemented.
type iamAdmin struct {
	adminpb.UnimplementedIAMServer
	s *Sim
}

// userKeyExpiry is the valid_before time GCP gives user-managed keys that never expire.
var userKeyExpiry = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)

// accountIDPattern is what GCP accepts as a service account id (the part before the @).
var accountIDPattern = regexp.MustCompile(`^[a-z][a-z0-9-]{4,28}[a-z0-9]$`)

// gcpProject finds a project by id or number, building a generated one if need be; nil
// when the world has none.
func (s *Sim) gcpProject(key string) *Project {
	for _, p := range s.world.GCP.Projects {
		if p.ID == key || p.Number == key {
			return p
		}
	}
	return s.genProj.project(key)
}

// projectFor resolves "projects/P…" to a project the caller may see. An unknown project is
// PermissionDenied, as GCP answers for projects one has no access to.
func (s *Sim) projectFor(name string) (*Project, error) {
	key := projectOf(name)
	if key == "" {
		return nil, errf(kindInvalid, "", "invalid resource name %q: want projects/PROJECT…", name)
	}
	p := s.gcpProject(key)
	if p == nil {
		return nil, errf(kindDenied, "", "Permission denied on resource project %s (or it may not exist).", key)
	}
	return p, nil
}

// serviceAccountFor resolves "projects/P/serviceAccounts/EMAIL_OR_UNIQUE_ID". P may be
// "-", GCP's wildcard: the account is then looked up in every project.
func (s *Sim) serviceAccountFor(name string) (*Project, *ServiceAccount, error) {
	parts := strings.Split(name, "/")
	if len(parts) < 4 || parts[0] != "projects" || parts[2] != "serviceAccounts" || parts[3] == "" {
		return nil, nil, errf(kindInvalid, "", "invalid service account name %q: want projects/PROJECT/serviceAccounts/EMAIL", name)
	}
	projects := s.world.GCP.Projects
	if parts[1] != "-" {
		p, err := s.projectFor(name)
		if err != nil {
			return nil, nil, err
		}
		projects = []*Project{p}
	}
	if parts[1] == "-" {
		// A generated project is named by the account's email: NAME@PROJECT.iam.gserviceaccount.com.
		_, domain, _ := strings.Cut(parts[3], "@")
		if p := s.genProj.project(strings.TrimSuffix(domain, ".iam.gserviceaccount.com")); p != nil {
			projects = append(slices.Clip(projects), p)
		}
	}
	for _, p := range projects {
		for _, sa := range p.ServiceAccounts {
			if sa.Email == parts[3] || sa.UniqueID == parts[3] {
				return p, sa, nil
			}
		}
	}
	return nil, nil, errf(kindNotFound, "", "Service account %s does not exist.", parts[3])
}

// keyFor resolves "projects/P/serviceAccounts/EMAIL/keys/KEYID".
func (s *Sim) keyFor(name string) (*Project, *ServiceAccount, *SAKey, error) {
	saName, keyID, ok := strings.Cut(name, "/keys/")
	if !ok || keyID == "" || strings.Contains(keyID, "/") {
		return nil, nil, nil, errf(kindInvalid, "", "invalid key name %q: want projects/PROJECT/serviceAccounts/EMAIL/keys/KEY", name)
	}
	p, sa, err := s.serviceAccountFor(saName)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, k := range sa.Keys {
		if k.ID == keyID {
			return p, sa, k, nil
		}
	}
	return nil, nil, nil, errf(kindNotFound, "", "Service account key %s does not exist.", keyID)
}

func saProto(p *Project, sa *ServiceAccount) *adminpb.ServiceAccount {
	sum := sha1.Sum([]byte(sa.Email + sa.DisplayName + strconv.FormatBool(sa.Disabled)))
	return &adminpb.ServiceAccount{
		Name:           "projects/" + p.ID + "/serviceAccounts/" + sa.Email,
		ProjectId:      p.ID,
		UniqueId:       sa.UniqueID,
		Email:          sa.Email,
		DisplayName:    sa.DisplayName,
		Etag:           sum[:8],
		Oauth2ClientId: sa.UniqueID,
		Disabled:       sa.Disabled,
	}
}

func keyProto(p *Project, sa *ServiceAccount, k *SAKey) *adminpb.ServiceAccountKey {
	kt := adminpb.ListServiceAccountKeysRequest_USER_MANAGED
	origin := adminpb.ServiceAccountKeyOrigin_GOOGLE_PROVIDED
	if k.Type == "SYSTEM_MANAGED" {
		kt = adminpb.ListServiceAccountKeysRequest_SYSTEM_MANAGED
	}
	return &adminpb.ServiceAccountKey{
		Name:            "projects/" + p.ID + "/serviceAccounts/" + sa.Email + "/keys/" + k.ID,
		KeyAlgorithm:    adminpb.ServiceAccountKeyAlgorithm(adminpb.ServiceAccountKeyAlgorithm_value[k.Algorithm]),
		ValidAfterTime:  timestamppb.New(k.ValidAfter),
		ValidBeforeTime: timestamppb.New(k.ValidBefore),
		KeyOrigin:       origin,
		KeyType:         kt,
		Disabled:        k.Disabled,
	}
}

// pageBounds reads an offset page token and a page size (0: def; capped at max).
func pageBounds(token string, size, def, limit, n int) (start, end int, next string, err error) {
	if token != "" {
		start, err = strconv.Atoi(strings.TrimPrefix(token, "o"))
		if err != nil || !strings.HasPrefix(token, "o") || start < 0 || start > n {
			return 0, 0, "", errf(kindInvalid, "badRequest", "Invalid page token %q.", token)
		}
	}
	if size <= 0 {
		size = def
	}
	size = min(size, limit)
	end = min(start+size, n)
	if end < n {
		next = "o" + strconv.Itoa(end)
	}
	return start, end, next, nil
}

// ListServiceAccounts pages through a project's service accounts (20 a page by default,
// at most 100, as GCP does).
func (a *iamAdmin) ListServiceAccounts(_ context.Context, req *adminpb.ListServiceAccountsRequest) (*adminpb.ListServiceAccountsResponse, error) {
	p, err := a.s.projectFor(req.GetName())
	if err != nil {
		return nil, err
	}
	start, end, next, err := pageBounds(req.GetPageToken(), int(req.GetPageSize()), 20, 100, len(p.ServiceAccounts))
	if err != nil {
		return nil, err
	}
	out := &adminpb.ListServiceAccountsResponse{NextPageToken: next}
	for _, sa := range p.ServiceAccounts[start:end] {
		out.Accounts = append(out.Accounts, saProto(p, sa))
	}
	return out, nil
}

// GetServiceAccount returns one service account.
func (a *iamAdmin) GetServiceAccount(_ context.Context, req *adminpb.GetServiceAccountRequest) (*adminpb.ServiceAccount, error) {
	p, sa, err := a.s.serviceAccountFor(req.GetName())
	if err != nil {
		return nil, err
	}
	return saProto(p, sa), nil
}

// CreateServiceAccount adds ACCOUNT_ID@PROJECT.iam.gserviceaccount.com.
func (a *iamAdmin) CreateServiceAccount(_ context.Context, req *adminpb.CreateServiceAccountRequest) (*adminpb.ServiceAccount, error) {
	p, err := a.s.projectFor(req.GetName())
	if err != nil {
		return nil, err
	}
	id := req.GetAccountId()
	if !accountIDPattern.MatchString(id) {
		return nil, errf(kindInvalid, "", "Invalid account id %q: it must be 6 to 30 lower case letters, digits or dashes, starting with a letter.", id)
	}
	email := id + "@" + p.ID + ".iam.gserviceaccount.com"
	for _, sa := range p.ServiceAccounts {
		if sa.Email == email {
			return nil, errf(kindConflict, "", "Service account %s already exists within project projects/%s.", id, p.ID)
		}
	}
	sa := &ServiceAccount{Email: email, UniqueID: numericID(email, 21), DisplayName: req.GetServiceAccount().GetDisplayName()}
	p.ServiceAccounts = append(p.ServiceAccounts, sa)
	return saProto(p, sa), nil
}

// DeleteServiceAccount removes a service account and its keys.
func (a *iamAdmin) DeleteServiceAccount(_ context.Context, req *adminpb.DeleteServiceAccountRequest) (*emptypb.Empty, error) {
	p, sa, err := a.s.serviceAccountFor(req.GetName())
	if err != nil {
		return nil, err
	}
	p.ServiceAccounts = slices.DeleteFunc(p.ServiceAccounts, func(x *ServiceAccount) bool { return x == sa })
	return &emptypb.Empty{}, nil
}

// EnableServiceAccount enables a service account; enabling an enabled one is a no-op.
func (a *iamAdmin) EnableServiceAccount(_ context.Context, req *adminpb.EnableServiceAccountRequest) (*emptypb.Empty, error) {
	_, sa, err := a.s.serviceAccountFor(req.GetName())
	if err != nil {
		return nil, err
	}
	sa.Disabled = false
	return &emptypb.Empty{}, nil
}

// DisableServiceAccount disables a service account; disabling a disabled one is a no-op.
func (a *iamAdmin) DisableServiceAccount(_ context.Context, req *adminpb.DisableServiceAccountRequest) (*emptypb.Empty, error) {
	_, sa, err := a.s.serviceAccountFor(req.GetName())
	if err != nil {
		return nil, err
	}
	sa.Disabled = true
	return &emptypb.Empty{}, nil
}

// ListServiceAccountKeys lists a service account's keys, filtered by key_types (empty:
// every type). The API does not page keys.
func (a *iamAdmin) ListServiceAccountKeys(_ context.Context, req *adminpb.ListServiceAccountKeysRequest) (*adminpb.ListServiceAccountKeysResponse, error) {
	p, sa, err := a.s.serviceAccountFor(req.GetName())
	if err != nil {
		return nil, err
	}
	out := &adminpb.ListServiceAccountKeysResponse{}
	for _, k := range sa.Keys {
		kp := keyProto(p, sa, k)
		if len(req.GetKeyTypes()) > 0 && !slices.Contains(req.GetKeyTypes(), kp.KeyType) {
			continue
		}
		out.Keys = append(out.Keys, kp)
	}
	return out, nil
}

// GetServiceAccountKey returns one key's metadata (never its private part).
func (a *iamAdmin) GetServiceAccountKey(_ context.Context, req *adminpb.GetServiceAccountKeyRequest) (*adminpb.ServiceAccountKey, error) {
	p, sa, k, err := a.s.keyFor(req.GetName())
	if err != nil {
		return nil, err
	}
	return keyProto(p, sa, k), nil
}

// CreateServiceAccountKey adds a user-managed key valid until 9999 and returns it with a
// credentials file. The private key in it is a placeholder: nothing signs with it here.
func (a *iamAdmin) CreateServiceAccountKey(_ context.Context, req *adminpb.CreateServiceAccountKeyRequest) (*adminpb.ServiceAccountKey, error) {
	p, sa, err := a.s.serviceAccountFor(req.GetName())
	if err != nil {
		return nil, err
	}
	userKeys := 0
	for _, k := range sa.Keys {
		if k.Type == "USER_MANAGED" {
			userKeys++
		}
	}
	if userKeys >= 10 {
		return nil, errf(kindInvalid, "", "Precondition check failed: service account %s already has 10 keys.", sa.Email)
	}
	alg := req.GetKeyAlgorithm()
	if alg == adminpb.ServiceAccountKeyAlgorithm_KEY_ALG_UNSPECIFIED {
		alg = adminpb.ServiceAccountKeyAlgorithm_KEY_ALG_RSA_2048
	}
	sum := sha1.Sum(fmt.Appendf(nil, "%s/key/%d", sa.Email, a.s.nextID()))
	k := &SAKey{ID: hex.EncodeToString(sum[:]), Type: "USER_MANAGED", ValidAfter: a.s.now().UTC().Truncate(time.Second),
		ValidBefore: userKeyExpiry, Algorithm: alg.String()}
	sa.Keys = append(sa.Keys, k)
	kp := keyProto(p, sa, k)
	kp.PrivateKeyType = req.GetPrivateKeyType()
	if kp.PrivateKeyType == adminpb.ServiceAccountPrivateKeyType_TYPE_UNSPECIFIED {
		kp.PrivateKeyType = adminpb.ServiceAccountPrivateKeyType_TYPE_GOOGLE_CREDENTIALS_FILE
	}
	kp.PrivateKeyData, _ = json.Marshal(map[string]string{
		"type": "service_account", "project_id": p.ID, "private_key_id": k.ID,
		"private_key":  "-----BEGIN PRIVATE KEY-----\nU0lNVUxBVEVE\n-----END PRIVATE KEY-----\n",
		"client_email": sa.Email, "client_id": sa.UniqueID,
		"auth_uri": "https://accounts.google.com/o/oauth2/auth", "token_uri": "https://oauth2.googleapis.com/token",
	})
	return kp, nil
}

// DeleteServiceAccountKey deletes a user-managed key; Google's own keys cannot be deleted.
func (a *iamAdmin) DeleteServiceAccountKey(_ context.Context, req *adminpb.DeleteServiceAccountKeyRequest) (*emptypb.Empty, error) {
	_, sa, k, err := a.s.keyFor(req.GetName())
	if err != nil {
		return nil, err
	}
	if k.Type == "SYSTEM_MANAGED" {
		return nil, errf(kindInvalid, "", "Precondition check failed: system-managed key %s cannot be deleted.", k.ID)
	}
	sa.Keys = slices.DeleteFunc(sa.Keys, func(x *SAKey) bool { return x == k })
	return &emptypb.Empty{}, nil
}

// DisableServiceAccountKey disables a user-managed key.
func (a *iamAdmin) DisableServiceAccountKey(_ context.Context, req *adminpb.DisableServiceAccountKeyRequest) (*emptypb.Empty, error) {
	_, _, k, err := a.s.keyFor(req.GetName())
	if err != nil {
		return nil, err
	}
	if k.Type == "SYSTEM_MANAGED" {
		return nil, errf(kindInvalid, "", "Precondition check failed: system-managed key %s cannot be disabled.", k.ID)
	}
	k.Disabled = true
	return &emptypb.Empty{}, nil
}

// EnableServiceAccountKey enables a key again.
func (a *iamAdmin) EnableServiceAccountKey(_ context.Context, req *adminpb.EnableServiceAccountKeyRequest) (*emptypb.Empty, error) {
	_, _, k, err := a.s.keyFor(req.GetName())
	if err != nil {
		return nil, err
	}
	k.Disabled = false
	return &emptypb.Empty{}, nil
}
