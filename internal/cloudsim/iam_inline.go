package cloudsim

import (
	"net/url"
	"slices"
)

// Inline policies: documents embedded in a user, role or group, by name.

// xInline is a PolicyDetail: an inline policy with its URL-encoded document.
type xInline struct {
	PolicyDocument string
	PolicyName     string
}

func inlineList(ps []InlinePolicy) []xInline {
	out := make([]xInline, 0, len(ps))
	for _, p := range ps {
		out = append(out, xInline{PolicyDocument: encodeDoc(p.Document), PolicyName: p.Name})
	}
	return out
}

// putInlinePolicy answers Put{User,Role,Group}Policy: it adds the policy or replaces the
// one of the same name.
func (s *Sim) putInlinePolicy(k iamKind) iamHandler {
	return func(a *Account, _ *call, f url.Values) (any, error) {
		h, err := holderNamed(a, k, f)
		if err != nil {
			return nil, err
		}
		name, err := iamName(f, "PolicyName", 128)
		if err != nil {
			return nil, err
		}
		doc, err := iamPolicyDoc(f, "PolicyDocument")
		if err != nil {
			return nil, err
		}
		for i, p := range *h.Inline {
			if p.Name == name {
				(*h.Inline)[i].Document = doc
				return nil, nil
			}
		}
		*h.Inline = append(*h.Inline, InlinePolicy{Name: name, Document: doc})
		return nil, nil
	}
}

// inlineNamed finds the entity named by the kind's parameter and the index of its
// inline policy the PolicyName parameter names.
func inlineNamed(a *Account, k iamKind, f url.Values) (iamHolder, int, error) {
	h, err := holderNamed(a, k, f)
	if err != nil {
		return h, -1, err
	}
	name, err := iamRequired(f, "PolicyName")
	if err != nil {
		return h, -1, err
	}
	for i, p := range *h.Inline {
		if p.Name == name {
			return h, i, nil
		}
	}
	return h, -1, noSuchEntity("The %s policy with name %s cannot be found.", k, name)
}

// getInlinePolicy answers Get{User,Role,Group}Policy.
func (s *Sim) getInlinePolicy(k iamKind) iamHandler {
	return func(a *Account, _ *call, f url.Values) (any, error) {
		h, i, err := inlineNamed(a, k, f)
		if err != nil {
			return nil, err
		}
		p := (*h.Inline)[i]
		out := struct {
			GroupName      string `xml:",omitempty"`
			PolicyDocument string
			PolicyName     string
			RoleName       string `xml:",omitempty"`
			UserName       string `xml:",omitempty"`
		}{PolicyDocument: encodeDoc(p.Document), PolicyName: p.Name}
		switch k {
		case iamUserKind:
			out.UserName = h.Name
		case iamRoleKind:
			out.RoleName = h.Name
		case iamGroupKind:
			out.GroupName = h.Name
		}
		return out, nil
	}
}

// deleteInlinePolicy answers Delete{User,Role,Group}Policy.
func (s *Sim) deleteInlinePolicy(k iamKind) iamHandler {
	return func(a *Account, _ *call, f url.Values) (any, error) {
		h, i, err := inlineNamed(a, k, f)
		if err != nil {
			return nil, err
		}
		*h.Inline = slices.Delete(*h.Inline, i, i+1)
		if len(*h.Inline) == 0 {
			*h.Inline = nil
		}
		return nil, nil
	}
}

// listInlinePolicies answers List{User,Role,Group}Policies.
func (s *Sim) listInlinePolicies(k iamKind) iamHandler {
	return func(a *Account, _ *call, f url.Values) (any, error) {
		h, err := holderNamed(a, k, f)
		if err != nil {
			return nil, err
		}
		names, pg, err := iamRenderPage(f, *h.Inline, func(p InlinePolicy) string { return p.Name })
		if err != nil {
			return nil, err
		}
		return struct {
			PolicyNames []string `xml:"PolicyNames>member"`
			iamPage
		}{names, pg}, nil
	}
}
