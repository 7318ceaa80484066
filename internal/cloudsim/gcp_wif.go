package cloudsim

import (
	"fmt"
	"net/http"
	"strconv"

	iam "google.golang.org/api/iam/v1"
)

// validateGCPProject checks what a project declares beyond its id and number: its
// workload identity pools and providers (ids unique, states known, one kind per provider)
// and its audit configs' log types.
func validateGCPProject(p *Project) error {
	if err := validateAuditConfigs(p.IAMPolicy.AuditConfigs); err != nil {
		return fmt.Errorf("iam_policy.%w", err)
	}
	if err := validateRecommendations(p); err != nil {
		return err
	}
	if err := validateInstances(p); err != nil {
		return err
	}
	pools := map[string]bool{}
	for i, pool := range p.WorkloadIdentityPools {
		if pool.ID == "" || pools[pool.ID] {
			return fmt.Errorf("workload_identity_pools[%d].id: %q is empty or appears twice", i, pool.ID)
		}
		pools[pool.ID] = true
		if pool.State != "" && pool.State != "ACTIVE" && pool.State != "DELETED" {
			return fmt.Errorf("workload_identity_pools[%d].state: %q is not ACTIVE or DELETED", i, pool.State)
		}
		provs := map[string]bool{}
		for j, pr := range pool.Providers {
			if pr.ID == "" || provs[pr.ID] {
				return fmt.Errorf("workload_identity_pools[%d].providers[%d].id: %q is empty or appears twice", i, j, pr.ID)
			}
			provs[pr.ID] = true
			if pr.State != "" && pr.State != "ACTIVE" && pr.State != "DELETED" {
				return fmt.Errorf("workload_identity_pools[%d].providers[%d].state: %q is not ACTIVE or DELETED", i, j, pr.State)
			}
			kinds := 0
			for _, k := range []bool{pr.OIDC != nil, pr.AWS != nil, pr.SAML != nil, pr.X509} {
				if k {
					kinds++
				}
			}
			if kinds > 1 {
				return fmt.Errorf("workload_identity_pools[%d].providers[%d] (%s): set only one of oidc, aws, saml, x509", i, j, pr.ID)
			}
		}
	}
	return nil
}

func validateAuditConfigs(acs []AuditConfig) error {
	for i, ac := range acs {
		if ac.Service == "" {
			return fmt.Errorf("audit_configs[%d].service is required", i)
		}
		for j, lc := range ac.LogConfigs {
			switch lc.LogType {
			case "ADMIN_READ", "DATA_READ", "DATA_WRITE", "LOG_TYPE_UNSPECIFIED":
			default:
				return fmt.Errorf("audit_configs[%d].audit_log_configs[%d].log_type: %q is not ADMIN_READ, DATA_READ or DATA_WRITE", i, j, lc.LogType)
			}
		}
	}
	return nil
}

// wifRoutes serves IAM v1's workload identity pools and providers (REST, "/v1/…").
func (s *Sim) wifRoutes(mux *http.ServeMux) {
	base := "GET /v1/projects/{project}/locations/{location}/workloadIdentityPools"
	mux.HandleFunc(base, s.listWIPools)
	mux.HandleFunc(base+"/{pool}", s.getWIPool)
	mux.HandleFunc(base+"/{pool}/providers", s.listWIProviders)
	mux.HandleFunc(base+"/{pool}/providers/{provider}", s.getWIProvider)
}

func stateOf(s string) string {
	if s == "" {
		return "ACTIVE"
	}
	return s
}

func wiPoolJSON(p *Project, pool *WorkloadIdentityPool) *iam.WorkloadIdentityPool {
	return &iam.WorkloadIdentityPool{Name: "projects/" + p.Number + "/locations/global/workloadIdentityPools/" + pool.ID,
		DisplayName: pool.DisplayName, Disabled: pool.Disabled, State: stateOf(pool.State)}
}

func wiProviderJSON(p *Project, pool *WorkloadIdentityPool, pr *WorkloadIdentityProvider) *iam.WorkloadIdentityPoolProvider {
	out := &iam.WorkloadIdentityPoolProvider{
		Name:        "projects/" + p.Number + "/locations/global/workloadIdentityPools/" + pool.ID + "/providers/" + pr.ID,
		DisplayName: pr.DisplayName, Disabled: pr.Disabled, State: stateOf(pr.State),
		AttributeCondition: pr.AttributeCondition, AttributeMapping: pr.AttributeMapping,
	}
	switch {
	case pr.AWS != nil:
		out.Aws = &iam.Aws{AccountId: pr.AWS.AccountID}
	case pr.SAML != nil:
		out.Saml = &iam.Saml{IdpMetadataXml: pr.SAML.IdPMetadataXML}
	case pr.X509:
		out.X509 = &iam.X509{}
	default:
		o := &iam.Oidc{}
		if pr.OIDC != nil {
			o.IssuerUri, o.AllowedAudiences = pr.OIDC.IssuerURI, pr.OIDC.AllowedAudiences
		}
		out.Oidc = o
	}
	return out
}

// wifProject finds the project of a workload identity request; an unknown one is
// PermissionDenied, as GCP answers.
func (s *Sim) wifProject(r *http.Request, perm string) (*Project, error) {
	key := r.PathValue("project")
	if p := s.gcpProject(key); p != nil && r.PathValue("location") == "global" {
		return p, nil
	}
	return nil, errf(kindDenied, "forbidden", "Permission 'iam.%s' denied on resource (or it may not exist).", perm)
}

func (s *Sim) wifPool(p *Project, id string) (*WorkloadIdentityPool, error) {
	for _, pool := range p.WorkloadIdentityPools {
		if pool.ID == id {
			return pool, nil
		}
	}
	return nil, errf(kindNotFound, "notFound", "Requested entity was not found.")
}

func wifPage(r *http.Request, n int) (int, int, string, error) {
	size := 0
	if v := r.URL.Query().Get("pageSize"); v != "" {
		var err error
		if size, err = strconv.Atoi(v); err != nil || size < 0 {
			return 0, 0, "", errf(kindInvalid, "badRequest", "Invalid pageSize %q.", v)
		}
	}
	return pageBounds(r.URL.Query().Get("pageToken"), size, 50, 1000, n)
}

// listWIPools lists a project's pools (deleted ones only with showDeleted=true).
func (s *Sim) listWIPools(w http.ResponseWriter, r *http.Request) {
	s.serveREST(w, r, "iamadmin", "ListWorkloadIdentityPools", s.projectKey(r.PathValue("project")), func(c *call) (any, error) {
		p, err := s.wifProject(r, "workloadIdentityPools.list")
		if err != nil {
			return nil, err
		}
		showDeleted := r.URL.Query().Get("showDeleted") == "true"
		var match []*iam.WorkloadIdentityPool
		for _, pool := range p.WorkloadIdentityPools {
			if showDeleted || stateOf(pool.State) != "DELETED" {
				match = append(match, wiPoolJSON(p, pool))
			}
		}
		start, end, next, err := wifPage(r, len(match))
		if err != nil {
			return nil, err
		}
		return &iam.ListWorkloadIdentityPoolsResponse{WorkloadIdentityPools: match[start:end], NextPageToken: next}, nil
	})
}

// listWIProviders lists a pool's providers (deleted ones only with showDeleted=true).
func (s *Sim) listWIProviders(w http.ResponseWriter, r *http.Request) {
	s.serveREST(w, r, "iamadmin", "ListWorkloadIdentityPoolProviders", s.projectKey(r.PathValue("project")), func(c *call) (any, error) {
		p, err := s.wifProject(r, "workloadIdentityPoolProviders.list")
		if err != nil {
			return nil, err
		}
		pool, err := s.wifPool(p, r.PathValue("pool"))
		if err != nil {
			return nil, err
		}
		showDeleted := r.URL.Query().Get("showDeleted") == "true"
		var match []*iam.WorkloadIdentityPoolProvider
		for _, pr := range pool.Providers {
			if showDeleted || stateOf(pr.State) != "DELETED" {
				match = append(match, wiProviderJSON(p, pool, pr))
			}
		}
		start, end, next, err := wifPage(r, len(match))
		if err != nil {
			return nil, err
		}
		return &iam.ListWorkloadIdentityPoolProvidersResponse{WorkloadIdentityPoolProviders: match[start:end], NextPageToken: next}, nil
	})
}

func (s *Sim) getWIProvider(w http.ResponseWriter, r *http.Request) {
	s.serveREST(w, r, "iamadmin", "GetWorkloadIdentityPoolProvider", s.projectKey(r.PathValue("project")), func(c *call) (any, error) {
		p, err := s.wifProject(r, "workloadIdentityPoolProviders.get")
		if err != nil {
			return nil, err
		}
		pool, err := s.wifPool(p, r.PathValue("pool"))
		if err != nil {
			return nil, err
		}
		for _, pr := range pool.Providers {
			if pr.ID == r.PathValue("provider") {
				return wiProviderJSON(p, pool, pr), nil
			}
		}
		return nil, errf(kindNotFound, "notFound", "Requested entity was not found.")
	})
}

func (s *Sim) getWIPool(w http.ResponseWriter, r *http.Request) {
	s.serveREST(w, r, "iamadmin", "GetWorkloadIdentityPool", s.projectKey(r.PathValue("project")), func(c *call) (any, error) {
		p, err := s.wifProject(r, "workloadIdentityPools.get")
		if err != nil {
			return nil, err
		}
		pool, err := s.wifPool(p, r.PathValue("pool"))
		if err != nil {
			return nil, err
		}
		return wiPoolJSON(p, pool), nil
	})
}
