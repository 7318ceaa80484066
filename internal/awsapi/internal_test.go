package awsapi

import (
	"context"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

func TestPartitionOf(t *testing.T) {
	tests := []struct{ arn, want string }{
		{"arn:aws:sts::111111111111:assumed-role/r/s", "aws"},
		{"arn:aws-cn:iam::111111111111:user/a", "aws-cn"},
		{"arn:aws-us-gov:iam::111111111111:root", "aws-us-gov"},
		{"", "aws"},
		{"not an arn", "aws"},
		{"arn::iam::1:root", "aws"},
	}
	for _, tc := range tests {
		if got := partitionOf(tc.arn); got != tc.want {
			t.Errorf("partitionOf(%q) = %q, want %q", tc.arn, got, tc.want)
		}
	}
}

// The sessions' client keeps IdleConns idle connections whether the configuration has
// no client (built in code), or the SDK's default one (which LoadDefaultConfig sets, with
// 10 a host); a client of the caller's own is left as it is.
func TestNewSessions_idleConnections(t *testing.T) {
	own := &http.Client{}
	for _, tc := range []struct {
		name   string
		client aws.HTTPClient
		want   int // MaxIdleConnsPerHost; 0: the caller's own client, untouched
	}{
		{"no client", nil, IdleConns},
		{"the SDK's default client", awshttp.NewBuildableClient(), IdleConns},
		{"a client of the caller's", own, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := aws.Config{Region: "us-east-1", HTTPClient: tc.client,
				Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", "")}
			s, err := NewSessions(context.Background(), Options{AWS: &cfg, Endpoint: "http://127.0.0.1:1"})
			if err != nil {
				t.Fatal(err)
			}
			inner := s.base.HTTPClient.(recordingClient).inner
			if tc.want == 0 {
				if inner != own {
					t.Fatalf("the caller's client was replaced by a %T", inner)
				}
				return
			}
			bc, ok := inner.(*awshttp.BuildableClient)
			if !ok {
				t.Fatalf("client %T, want the SDK's buildable client", inner)
			}
			if tr := bc.GetTransport(); tr.MaxIdleConnsPerHost != tc.want || tr.MaxIdleConns != tc.want {
				t.Errorf("idle connections %d a host, %d in all; want %d", tr.MaxIdleConnsPerHost, tr.MaxIdleConns, tc.want)
			}
		})
	}
}
