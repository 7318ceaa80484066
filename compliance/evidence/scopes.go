package evidence

import "strings"

// ScopeHolds reports whether a scope of the given id can hold resources of the given
// type: whether a failure to read that scope leaves resources of that type unjudged. It
// knows where the collectors put each type:
//
//   - AWS (collectors/aws): aws/ACCOUNT/SERVICE[/REGION] holds the types aws.SERVICE.*:
//     aws/A/iam the users, roles, groups, policies, access keys, root user, password
//     policy and server certificates; aws/A/ec2/REGION the security groups;
//     aws/A/acm/REGION the certificates. aws/A/ec2 and aws/A/acm without a region are
//     those services in every region, recorded failed when the regions could not be
//     listed.
//   - GCP (collectors/gcp): gcp/PROJECT/iam holds gcp.iam.* (service accounts and their
//     keys) and the project's gcp.project.iam_policy; gcp/PROJECT/compute holds
//     gcp.compute.* (firewalls, networks, SSL certificates); gcp/folders/N/iam holds only
//     gcp.folder.iam_policy and gcp/organizations/N/iam only gcp.organization.iam_policy.
//   - TLS (collectors/tlsprobe): tls/HOST:PORT holds the endpoint, tls.endpoint.
//
// A scope of another provider holds the types of that provider (the type's first
// segment), and a scope whose id does not have its provider's shape holds every type of
// its provider: a failure the mapping cannot place must leave the controls it might
// touch unknown, never passing. A scope never holds another provider's types.
func ScopeHolds(scopeID, resourceType string) bool {
	provider, rest, _ := strings.Cut(scopeID, "/")
	typeProvider, typeRest, _ := strings.Cut(resourceType, ".")
	if provider != typeProvider {
		return false
	}
	typeService, _, _ := strings.Cut(typeRest, ".")
	switch provider {
	case "aws":
		// ACCOUNT/SERVICE or ACCOUNT/SERVICE/REGION.
		f := strings.Split(rest, "/")
		if (len(f) != 2 && len(f) != 3) || f[0] == "" || f[1] == "" {
			return true
		}
		return f[1] == typeService
	case "gcp":
		return gcpScopeHolds(rest, typeService)
	case "tls":
		// One endpoint per scope, and one type for it.
		return true
	}
	return true
}

// gcpScopeHolds places a GCP type (by its service segment) in a GCP scope (its id after
// "gcp/").
func gcpScopeHolds(rest, typeService string) bool {
	f := strings.Split(rest, "/")
	switch {
	case len(f) == 3 && f[0] == "folders" && f[1] != "" && f[2] == "iam":
		return typeService == "folder"
	case len(f) == 3 && f[0] == "organizations" && f[1] != "" && f[2] == "iam":
		return typeService == "organization"
	case len(f) == 2 && f[0] != "" && f[0] != "folders" && f[0] != "organizations" && f[1] != "":
		switch typeService {
		case "folder", "organization":
			// An ancestor's policy is read in the ancestor's own scope.
			return false
		case "project":
			// The project's IAM policy is read with the project's IAM.
			return f[1] == "iam"
		}
		return f[1] == typeService
	}
	return true
}
