package aws

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"time"

	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
)

// parseCredentialReport reads IAM's credential report CSV into rows by user name.
func parseCredentialReport(content []byte) (map[string]map[string]string, error) {
	r := csv.NewReader(bytes.NewReader(content))
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("parse credential report: %w", err)
	}
	if len(recs) == 0 || len(recs[0]) == 0 || recs[0][0] != "user" {
		return nil, errors.New("parse credential report: no header row starting with \"user\"")
	}
	head := recs[0]
	out := make(map[string]map[string]string, len(recs)-1)
	for i, rec := range recs[1:] {
		if len(rec) != len(head) {
			return nil, fmt.Errorf("parse credential report: row %d has %d fields, the header %d", i+2, len(rec), len(head))
		}
		row := make(map[string]string, len(head))
		for j, h := range head {
			row[h] = rec[j]
		}
		out[rec[0]] = row
	}
	return out, nil
}

// reportTime reads a credential-report time; N/A, no_information and not_supported are
// times that never happened.
func reportTime(s string) any {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

type keyUse struct {
	at              any
	service, region string
}

// reportKeyUse finds a key's last use in its user's report row. The report numbers the
// keys 1 and 2 and gives their creation times as last_rotated; the key is the one whose
// creation time matches.
func reportKeyUse(row map[string]string, k iamtypes.AccessKeyMetadata) keyUse {
	if row == nil || k.CreateDate == nil {
		return keyUse{}
	}
	created := k.CreateDate.UTC().Truncate(time.Second)
	for _, n := range []string{"1", "2"} {
		t, err := time.Parse(time.RFC3339, row["access_key_"+n+"_last_rotated"])
		if err != nil || !t.UTC().Truncate(time.Second).Equal(created) {
			continue
		}
		u := keyUse{at: reportTime(row["access_key_"+n+"_last_used_date"])}
		if u.at != nil {
			u.service = row["access_key_"+n+"_last_used_service"]
			u.region = row["access_key_"+n+"_last_used_region"]
		}
		return u
	}
	return keyUse{}
}
