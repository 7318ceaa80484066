package aws

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// TestInterfaceKind covers the shapes of interface the simulator does not render (the
// collector tests read the others through the SDK): gateway load balancers, the oldest
// load balancers and databases known by their description only, services warden does not
// name, and an instance's interface some service manages.
func TestInterfaceKind(t *testing.T) {
	attached := &ec2types.NetworkInterfaceAttachment{InstanceId: aws.String("i-0abc"), Status: ec2types.AttachmentStatusAttached}
	service := &ec2types.NetworkInterfaceAttachment{InstanceOwnerId: aws.String("amazon-aws"), Status: ec2types.AttachmentStatusAttached}
	tests := []struct {
		name string
		n    ec2types.NetworkInterface
		want string
	}{
		{"instance", ec2types.NetworkInterface{InterfaceType: "interface", Attachment: attached, RequesterManaged: aws.Bool(false)}, "ec2_instance"},
		{"instance's EFA", ec2types.NetworkInterface{InterfaceType: ec2types.NetworkInterfaceTypeEfa, Attachment: attached, RequesterManaged: aws.Bool(false)}, "ec2_instance"},
		{"gateway load balancer", ec2types.NetworkInterface{InterfaceType: ec2types.NetworkInterfaceTypeGatewayLoadBalancer, Attachment: service}, "elb"},
		{"gateway load balancer endpoint", ec2types.NetworkInterface{InterfaceType: ec2types.NetworkInterfaceTypeGatewayLoadBalancerEndpoint, Attachment: service}, "vpc_endpoint"},
		{"NAT gateway as the enum spells it", ec2types.NetworkInterface{InterfaceType: ec2types.NetworkInterfaceTypeNatGateway, Attachment: service}, "nat_gateway"},
		{"classic load balancer by description", ec2types.NetworkInterface{InterfaceType: "interface", Description: aws.String("ELB shop"), Attachment: service, RequesterManaged: aws.Bool(true)}, "elb"},
		{"database by description", ec2types.NetworkInterface{InterfaceType: "interface", Description: aws.String("RDSNetworkInterface"), Attachment: service, RequesterManaged: aws.Bool(true)}, "rds"},
		{"Redshift", ec2types.NetworkInterface{InterfaceType: "interface", RequesterId: aws.String("amazon-redshift"), Attachment: service, RequesterManaged: aws.Bool(true)}, "redshift"},
		{"EFS mount target", ec2types.NetworkInterface{InterfaceType: "interface", Description: aws.String("EFS mount target for fs-0abc"), Attachment: service, RequesterManaged: aws.Bool(true)}, "other"},
		{"QuickSight", ec2types.NetworkInterface{InterfaceType: ec2types.NetworkInterfaceTypeQuicksight, Attachment: service, RequesterManaged: aws.Bool(true)}, "other"},
		// A managed interface on an instance (an EKS branch interface, say) is the
		// service's, not an instance the customer attached.
		{"managed on an instance", ec2types.NetworkInterface{InterfaceType: "interface", Attachment: attached, RequesterManaged: aws.Bool(true)}, "other"},
		{"detached", ec2types.NetworkInterface{InterfaceType: "interface", Status: ec2types.NetworkInterfaceStatusAvailable}, "detached"},
	}
	for _, tc := range tests {
		if got := interfaceKind(tc.n); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}
