package gcp

import (
	"errors"
	"fmt"
	"testing"

	computepb "cloud.google.com/go/compute/apiv1/computepb"
	"google.golang.org/protobuf/proto"

	"github.com/warden-sec/warden/remediate"
)

// A Compute operation that finished in error keeps its HTTP status, so that a failure
// the machine may retry soon (a backend unavailable, a quota) is marked transient and a
// refusal is not, as for a call answered with an error.
func TestOperationError_transientByStatus(t *testing.T) {
	op := func(status int32, code, msg string) *computepb.Operation {
		p := &computepb.Operation{Name: proto.String("operation-1"), Error: &computepb.Error{
			Errors: []*computepb.Errors{{Code: proto.String(code), Message: proto.String(msg)}}}}
		if status != 0 {
			p.HttpErrorStatusCode = proto.Int32(status)
		}
		return p
	}
	tests := []struct {
		name      string
		op        *computepb.Operation
		wantErr   string
		transient bool
	}{
		{"done without error", &computepb.Operation{Name: proto.String("operation-1")}, "", false},
		{"backend unavailable", op(503, "RESOURCE_NOT_READY", "try again"), "operation operation-1: RESOURCE_NOT_READY: try again", true},
		{"quota", op(429, "QUOTA_EXCEEDED", "quota 'FIREWALLS' exceeded"), "operation operation-1: QUOTA_EXCEEDED: quota 'FIREWALLS' exceeded", true},
		{"refused", op(403, "PERMISSION_DENIED", "compute.firewalls.update"), "operation operation-1: PERMISSION_DENIED: compute.firewalls.update", false},
		{"invalid", op(400, "INVALID_FIELD_VALUE", "bad"), "operation operation-1: INVALID_FIELD_VALUE: bad", false},
		{"no status", op(0, "", "something"), "operation operation-1: something", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := operationError(tt.op)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("error %v, want none", err)
				}
				return
			}
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("error %v, want %q", err, tt.wantErr)
			}
			// As disable wraps it, and as the machine sees it.
			wrapped := fmt.Errorf("disable firewall rule ssh of p: %w", err)
			if got := remediate.Transient(wrapped); got != tt.transient {
				t.Errorf("Transient = %v, want %v", got, tt.transient)
			}
			var oe *OperationError
			if !errors.As(wrapped, &oe) || oe.Operation != "operation-1" {
				t.Errorf("the operation's error is not reachable: %v", wrapped)
			}
		})
	}
}
