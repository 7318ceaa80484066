package aws

import (
	"bytes"
	"encoding/csv"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
)

const reportCSV = `user,arn,user_creation_time,password_enabled,password_last_used,password_last_changed,password_next_rotation,mfa_active,access_key_1_active,access_key_1_last_rotated,access_key_1_last_used_date,access_key_1_last_used_region,access_key_1_last_used_service,access_key_2_active,access_key_2_last_rotated,access_key_2_last_used_date,access_key_2_last_used_region,access_key_2_last_used_service,cert_1_active,cert_1_last_rotated,cert_2_active,cert_2_last_rotated
<root_account>,arn:aws:iam::111111111111:root,2020-01-01T00:00:00+00:00,not_supported,2026-11-01T10:00:00+00:00,not_supported,not_supported,true,false,N/A,N/A,N/A,N/A,false,N/A,N/A,N/A,N/A,false,N/A,false,N/A
bob,arn:aws:iam::111111111111:user/bob,2024-01-01T00:00:00+00:00,false,N/A,N/A,N/A,false,true,2024-01-02T03:04:05+00:00,2026-11-20T08:30:00+00:00,eu-west-1,s3,false,2025-06-01T00:00:00+00:00,N/A,N/A,N/A,false,N/A,false,N/A
`

func TestCredentialReport(t *testing.T) {
	rows, err := parseCredentialReport([]byte(reportCSV))
	if err != nil {
		t.Fatal(err)
	}
	if got := reportTime(rows["<root_account>"]["password_last_used"]); got != "2026-11-01T10:00:00Z" {
		t.Errorf("root password_last_used = %v", got)
	}
	if got := reportTime(rows["bob"]["password_last_used"]); got != nil {
		t.Errorf("N/A read as %v", got)
	}
	tests := []struct {
		created time.Time
		want    keyUse
	}{
		{time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), keyUse{at: "2026-11-20T08:30:00Z", service: "s3", region: "eu-west-1"}},
		{time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC), keyUse{}},
		{time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC), keyUse{}},
	}
	for _, tc := range tests {
		got := reportKeyUse(rows["bob"], iamtypes.AccessKeyMetadata{AccessKeyId: aws.String("AKIA"), CreateDate: &tc.created})
		if got != tc.want {
			t.Errorf("key created %v: %+v, want %+v", tc.created, got, tc.want)
		}
	}
}

func TestCredentialReportErrors(t *testing.T) {
	for _, in := range []string{"", "name,arn\nx,y\n", "user,arn\nbob\n", "user,arn\n\"bob,arn\n"} {
		if _, err := parseCredentialReport([]byte(in)); err == nil || !strings.Contains(err.Error(), "credential report") {
			t.Errorf("%q: error %v", in, err)
		}
	}
}

// FuzzCredentialReport: whatever GetCredentialReport returns, parsing it never panics;
// each row it accepts is keyed by its user and holds every column of the header; the
// times it reads from a row are RFC 3339 in UTC, or nothing.
func FuzzCredentialReport(f *testing.F) {
	f.Add([]byte(reportCSV))
	f.Add([]byte("user,arn\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := parseCredentialReport(b)
		if err != nil {
			return
		}
		head, _ := csv.NewReader(bytes.NewReader(b)).Read()
		if slices.Contains(head[1:], "user") {
			return // a second "user" column: never IAM's, and the row's user is ambiguous
		}
		header := -1
		for user, row := range rows {
			if row["user"] != user || (header >= 0 && len(row) != header) {
				t.Fatalf("row %q: %v", user, row)
			}
			header = len(row)
			_ = reportKeyUse(row, iamtypes.AccessKeyMetadata{CreateDate: aws.Time(time.Now())})
			if at := reportTime(row["password_last_used"]); at != nil {
				s, _ := at.(string)
				if p, err := time.Parse(time.RFC3339, s); err != nil || p.Location() != time.UTC {
					t.Fatalf("password_last_used %q read as %v", row["password_last_used"], at)
				}
			}
		}
	})
}
