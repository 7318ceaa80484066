package cloudsim

import (
	"net/http"
	"strings"

	resourcemanagerpb "cloud.google.com/go/resourcemanager/apiv3/resourcemanagerpb"
)

// gcpFolder finds a folder; unknown ones are PermissionDenied on perm
// (resourcemanager.folders.PERM), as GCP answers for folders the caller cannot see.
func (s *Sim) gcpFolder(id, perm string) (*GCPFolder, error) {
	for _, f := range s.world.GCP.Folders {
		if f.ID == id {
			return f, nil
		}
	}
	return nil, errf(kindDenied, "forbidden", "Permission 'resourcemanager.folders.%s' denied on resource '//cloudresourcemanager.googleapis.com/folders/%s' (or it may not exist).", perm, id)
}

// getFolder serves GET /v3/folders/N (folders.get). The call's account is "folders/N",
// which faults match on.
func (s *Sim) getFolder(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("folder")
	s.serveREST(w, r, "cloudresourcemanager", "GetFolder", "folders/"+id, func(c *call) (any, error) {
		f, err := s.gcpFolder(id, "get")
		if err != nil {
			return nil, err
		}
		return &resourcemanagerpb.Folder{
			Name: "folders/" + f.ID, Parent: f.Parent, DisplayName: f.DisplayName,
			State: resourcemanagerpb.Folder_ACTIVE,
			Etag:  `W/"` + makeID("", f.ID+f.DisplayName+f.Parent, 16) + `"`,
		}, nil
	})
}

// folderVerb serves POST /v3/folders/N:getIamPolicy and :setIamPolicy.
func (s *Sim) folderVerb(w http.ResponseWriter, r *http.Request) {
	id, verb, _ := strings.Cut(r.PathValue("rest"), ":")
	s.policyVerb(w, r, verb, "folders/"+id, func(perm string) (*IAMPolicy, error) {
		f, err := s.gcpFolder(id, perm)
		if err != nil {
			return nil, err
		}
		return &f.IAMPolicy, nil
	})
}
