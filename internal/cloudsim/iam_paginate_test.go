package cloudsim

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
)

func iamMarker(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// TestIAMWindow covers the edges of Marker/MaxItems handling.
func TestIAMWindow(t *testing.T) {
	tests := []struct {
		name       string
		n          int
		maxItems   string
		marker     string
		start, end int
		next       int // offset in the next marker; -1 for none
		wantErr    bool
	}{
		{"empty list", 0, "", "", 0, 0, -1, false},
		{"default page size", 250, "", "", 0, 100, 100, false},
		{"fewer than a page", 3, "", "", 0, 3, -1, false},
		{"exactly one page", 100, "", "", 0, 100, -1, false},
		{"one more than a page", 101, "", "", 0, 100, 100, false},
		{"page of one", 3, "1", "", 0, 1, 1, false},
		{"middle page", 10, "3", iamMarker("sim1:3"), 3, 6, 6, false},
		{"last partial page", 10, "3", iamMarker("sim1:9"), 9, 10, -1, false},
		{"last full page", 9, "3", iamMarker("sim1:6"), 6, 9, -1, false},
		{"largest page", 5000, "1000", "", 0, 1000, 1000, false},
		{"marker past the end (entities deleted)", 4, "2", iamMarker("sim1:8"), 4, 4, -1, false},
		{"marker at the end", 4, "2", iamMarker("sim1:4"), 4, 4, -1, false},
		{"MaxItems 0", 5, "0", "", 0, 0, -1, true},
		{"MaxItems negative", 5, "-1", "", 0, 0, -1, true},
		{"MaxItems too large", 5, "1001", "", 0, 0, -1, true},
		{"MaxItems not a number", 5, "ten", "", 0, 0, -1, true},
		{"marker not base64", 5, "", "%%%", 0, 0, -1, true},
		{"marker of another kind", 5, "", iamMarker("other:1"), 0, 0, -1, true},
		{"marker offset not a number", 5, "", iamMarker("sim1:x"), 0, 0, -1, true},
		{"marker offset negative", 5, "", iamMarker("sim1:-2"), 0, 0, -1, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := url.Values{}
			if tc.maxItems != "" {
				f.Set("MaxItems", tc.maxItems)
			}
			if tc.marker != "" {
				f.Set("Marker", tc.marker)
			}
			start, end, pg, err := iamWindow(f, tc.n)
			if tc.wantErr {
				if err == nil || err.(*apiError).Kind != kindInvalid {
					t.Fatalf("err %v, want a validation error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wantPage := iamPage{}
			if tc.next >= 0 {
				wantPage = iamPage{IsTruncated: true, Marker: iamMarker(fmt.Sprintf("sim1:%d", tc.next))}
			}
			if start != tc.start || end != tc.end || pg != wantPage {
				t.Errorf("window = [%d,%d) %+v, want [%d,%d) %+v", start, end, pg, tc.start, tc.end, wantPage)
			}
		})
	}
}

// TestIAMPaginators pages through users with every page size around the list's length,
// through the SDK's own paginator.
func TestIAMPaginators(t *testing.T) {
	const n = 7
	a := &Account{ID: iamTestAcct}
	var want []string
	for i := range n {
		a.Users = append(a.Users, &User{Name: fmt.Sprintf("u%d", i)})
		want = append(want, fmt.Sprintf("u%d", i))
	}
	_, _, cfg := iamTestSim(t, &World{AWS: AWS{Accounts: []*Account{a}}}, "AKIDSIM")
	c := iam.NewFromConfig(cfg)
	for _, size := range []int32{0, 1, 2, 3, 6, 7, 8, 1000} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			in := &iam.ListUsersInput{}
			if size > 0 {
				in.MaxItems = aws.Int32(size)
			}
			var got []string
			pages := 0
			p := iam.NewListUsersPaginator(c, in)
			for p.HasMorePages() {
				out, err := p.NextPage(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				pages++
				last := !p.HasMorePages()
				if out.IsTruncated == last || (out.Marker == nil) != last {
					t.Errorf("page %d: IsTruncated %v, Marker %v, last %v", pages, out.IsTruncated, out.Marker, last)
				}
				for _, u := range out.Users {
					got = append(got, aws.ToString(u.UserName))
				}
			}
			wantPages := 1
			if size > 0 {
				wantPages = max(1, (n+int(size)-1)/int(size))
			}
			if !slices.Equal(got, want) || pages != wantPages {
				t.Errorf("users %v in %d pages, want %v in %d", got, pages, want, wantPages)
			}
		})
	}

	// A marker taken before deletions still answers: the rest of the shortened list.
	first, err := c.ListUsers(context.Background(), &iam.ListUsersInput{MaxItems: aws.Int32(5)})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"u0", "u1", "u2"} {
		if _, err := c.DeleteUser(context.Background(), &iam.DeleteUserInput{UserName: aws.String(name)}); err != nil {
			t.Fatal(err)
		}
	}
	rest, err := c.ListUsers(context.Background(), &iam.ListUsersInput{Marker: first.Marker, MaxItems: aws.Int32(5)})
	if err != nil || len(rest.Users) != 0 || rest.IsTruncated {
		t.Errorf("page after deletions = %+v, %v", rest, err)
	}
}
