package apimodel

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const tinyQuery = `{
 "metadata": {"protocol": "query", "serviceId": "Tiny"},
 "operations": {
  "GetThing": {"name": "GetThing", "output": {"shape": "GetThingResponse", "resultWrapper": "GetThingResult"},
   "errors": [{"shape": "NoSuchEntityException"}]},
  "DeleteThing": {"name": "DeleteThing"}
 },
 "shapes": {
  "GetThingResponse": {"type": "structure", "required": ["Thing"], "members": {"Thing": {"shape": "Thing"}}},
  "Thing": {"type": "structure", "required": ["Name", "Created"], "members": {
    "Name": {"shape": "string"}, "Created": {"shape": "ts"}, "Count": {"shape": "int"},
    "On": {"shape": "bool"}, "Status": {"shape": "status"}, "Tags": {"shape": "tags"},
    "Flat": {"shape": "strs", "flattened": true, "locationName": "flat"}}},
  "tags": {"type": "list", "member": {"shape": "string"}},
  "strs": {"type": "list", "member": {"shape": "string"}},
  "string": {"type": "string"}, "ts": {"type": "timestamp"}, "int": {"type": "integer"},
  "bool": {"type": "boolean"}, "status": {"type": "string", "enum": ["Active", "Inactive"]},
  "NoSuchEntityException": {"type": "structure", "members": {}, "error": {"code": "NoSuchEntity", "httpStatusCode": 404}, "exception": true}
 }}`

const tinyEC2 = `{
 "metadata": {"protocol": "ec2", "serviceId": "TinyEC2"},
 "operations": {"DescribeThings": {"name": "DescribeThings", "output": {"shape": "Out"}}},
 "shapes": {
  "Out": {"type": "structure", "members": {"Things": {"shape": "list", "locationName": "thingSet"}}},
  "list": {"type": "list", "member": {"shape": "Thing", "locationName": "item"}},
  "Thing": {"type": "structure", "members": {"Id": {"shape": "string", "locationName": "thingId"}}},
  "string": {"type": "string"}
 }}`

const tinyJSON = `{
 "metadata": {"protocol": "json", "serviceId": "TinyJSON"},
 "operations": {"Describe": {"name": "Describe", "output": {"shape": "Out"}, "errors": [{"shape": "ResourceNotFoundException"}]}},
 "shapes": {
  "Out": {"type": "structure", "members": {"When": {"shape": "ts"}, "N": {"shape": "long"}, "M": {"shape": "m"}, "S": {"shape": "status"}}},
  "m": {"type": "map", "key": {"shape": "string"}, "value": {"shape": "long"}},
  "ts": {"type": "timestamp"}, "long": {"type": "long"}, "string": {"type": "string"},
  "status": {"type": "string", "enum": ["ISSUED"]},
  "ResourceNotFoundException": {"type": "structure", "members": {}, "exception": true}
 }}`

func load(t *testing.T, model string) *AWSModel {
	t.Helper()
	p := filepath.Join(t.TempDir(), "service-2.json")
	if err := os.WriteFile(p, []byte(model), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := LoadAWS(p)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// check asserts that problems hold one problem per wanted fragment, in any order.
func check(t *testing.T, problems []Problem, want ...string) {
	t.Helper()
	if len(problems) != len(want) {
		t.Fatalf("problems %v, want %d (%v)", problems, len(want), want)
	}
	for _, w := range want {
		found := false
		for _, p := range problems {
			found = found || strings.Contains(p.String(), w)
		}
		if !found {
			t.Errorf("no problem says %q in %v", w, problems)
		}
	}
}

func TestValidateXML_query(t *testing.T) {
	m := load(t, tinyQuery)
	wrap := func(inner string) []byte {
		return []byte(`<?xml version="1.0"?><GetThingResponse xmlns="x"><GetThingResult>` + inner +
			`</GetThingResult><ResponseMetadata><RequestId>1</RequestId></ResponseMetadata></GetThingResponse>`)
	}
	cases := []struct {
		name, body string
		want       []string
	}{
		{"valid", `<Thing><Name>a</Name><Created>2026-01-02T03:04:05Z</Created><Count>3</Count><On>true</On>` +
			`<Status>Active</Status><Tags><member>x</member></Tags><flat>1</flat><flat>2</flat></Thing>`, nil},
		{"required missing", `<Thing><Name>a</Name></Thing>`, []string{"required member Created"}},
		{"unknown member", `<Thing><Name>a</Name><Created>2026-01-02T03:04:05Z</Created><Colour>red</Colour></Thing>`, []string{"no member <Colour>"}},
		{"types", `<Thing><Name>a</Name><Created>yesterday</Created><Count>three</Count><On>yes</On></Thing>`,
			[]string{`"yesterday" is not a timestamp`, `"three" is not an integer`, `"yes" is not a boolean`}},
		{"enum", `<Thing><Name>a</Name><Created>2026-01-02T03:04:05Z</Created><Status>Gone</Status></Thing>`, []string{`"Gone" is not a value of enum status`}},
		{"list element", `<Thing><Name>a</Name><Created>2026-01-02T03:04:05Z</Created><Tags><item>x</item></Tags></Thing>`, []string{"holds <member> elements"}},
		{"no result", ``, []string{"required member Thing"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { check(t, m.ValidateXML("GetThing", wrap(tc.body)), tc.want...) })
	}
	check(t, m.ValidateXML("DeleteThing", []byte(`<DeleteThingResponse><ResponseMetadata/></DeleteThingResponse>`)))
	check(t, m.ValidateXML("DeleteThing", []byte(`<DeleteThingResponse><DeleteThingResult/></DeleteThingResponse>`)), "unexpected element")
	check(t, m.ValidateXML("GetThing", []byte(`<Other/>`)), "root element", "required member Thing")
	check(t, m.ValidateXML("Nope", []byte(`<x/>`)), "no such operation")
}

func TestValidateXML_ec2(t *testing.T) {
	m := load(t, tinyEC2)
	check(t, m.ValidateXML("DescribeThings", []byte(`<DescribeThingsResponse><requestId>r</requestId><thingSet><item><thingId>t-1</thingId></item></thingSet></DescribeThingsResponse>`)))
	check(t, m.ValidateXML("DescribeThings", []byte(`<DescribeThingsResponse><thingSet><member><Id>t-1</Id></member></thingSet></DescribeThingsResponse>`)), "holds <item> elements")
	check(t, m.ValidateXML("DescribeThings", []byte(`<DescribeThingsResponse><thingSet><item><Id>t-1</Id></item></thingSet></DescribeThingsResponse>`)), "no member <Id>")
}

func TestValidateJSON(t *testing.T) {
	m := load(t, tinyJSON)
	check(t, m.ValidateJSON("Describe", []byte(`{"When": 1767225600.5, "N": 3, "M": {"a": 1}, "S": "ISSUED"}`)))
	check(t, m.ValidateJSON("Describe", []byte(`{"When": "2026-01-01T00:00:00Z"}`)))
	check(t, m.ValidateJSON("Describe", []byte(`{"When": true, "N": "3", "M": {"a": "x"}, "S": "NEW", "X": 1}`)),
		"timestamp is a bool", "is a number, the answer has string", "M.a: long is a number", `"NEW" is not a value`, "no member X")
}

func TestCheckError(t *testing.T) {
	q, j, e := load(t, tinyQuery), load(t, tinyJSON), load(t, tinyEC2)
	check(t, q.CheckError("GetThing", "NoSuchEntity", 404))
	check(t, q.CheckError("GetThing", "NoSuchEntity", 400), "answered with HTTP 400, the model says 404")
	check(t, q.CheckError("GetThing", "Throttling", 400))
	check(t, q.CheckError("GetThing", "NoSuchEntityException", 404), "neither one the model lists (NoSuchEntity)")
	check(t, j.CheckError("Describe", "ResourceNotFoundException", 400))
	check(t, j.CheckError("Describe", "NotFound", 400), "neither")
	check(t, e.CheckError("DescribeThings", "InvalidGroup.NotFound", 400)) // EC2 lists none
	s3 := load(t, strings.Replace(tinyQuery, `"serviceId": "Tiny"`, `"serviceId": "S3"`, 1))
	check(t, s3.CheckError("GetThing", "SlowDown", 503)) // in S3's own error list
	check(t, q.CheckError("GetThing", "SlowDown", 503), "neither")
	if code, ok := XMLErrorCode([]byte(`<Response><Errors><Error><Code>InvalidGroup.NotFound</Code></Error></Errors></Response>`)); !ok || code != "InvalidGroup.NotFound" {
		t.Errorf("XMLErrorCode = %q %v", code, ok)
	}
	if code, ok := JSONErrorCode([]byte(`{"__type": "com.amazon#ResourceNotFoundException"}`)); !ok || code != "ResourceNotFoundException" {
		t.Errorf("JSONErrorCode = %q %v", code, ok)
	}
}

const tinyDiscovery = `{
 "name": "tiny", "version": "v1",
 "resources": {"things": {"methods": {"get": {"id": "tiny.things.get", "httpMethod": "GET", "path": "things/{name}", "response": {"$ref": "Thing"}},
   "delete": {"id": "tiny.things.delete", "httpMethod": "DELETE", "path": "things/{name}"}},
   "resources": {"parts": {"methods": {"list": {"id": "tiny.things.parts.list", "response": {"$ref": "Thing"}}}}}}},
 "schemas": {"Thing": {"id": "Thing", "type": "object", "properties": {
   "name": {"type": "string", "required": true}, "id": {"type": "string", "format": "uint64"},
   "priority": {"type": "integer", "format": "int32"}, "created": {"type": "string", "format": "google-datetime"},
   "state": {"type": "string", "enum": ["ACTIVE", "DELETED"]}, "labels": {"type": "object", "additionalProperties": {"type": "string"}},
   "rules": {"type": "array", "items": {"type": "object", "properties": {"IPProtocol": {"type": "string"}}}}}}}
}`

func TestDiscovery(t *testing.T) {
	p := filepath.Join(t.TempDir(), "tiny-api.json")
	if err := os.WriteFile(p, []byte(tinyDiscovery), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := LoadDiscovery(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.Method("tiny.things.parts.list"); !ok {
		t.Error("nested resource's method not found")
	}
	check(t, d.ValidateResponse("tiny.things.get", []byte(`{"name": "a", "id": "18446744073709551615", "priority": 1000,
		"created": "2026-01-02T03:04:05.123-07:00", "state": "ACTIVE", "labels": {"k": "v"}, "rules": [{"IPProtocol": "tcp"}]}`)))
	check(t, d.ValidateResponse("tiny.things.get", []byte(`{"id": 12, "priority": "1000", "created": "today", "state": "GONE",
		"labels": {"k": 1}, "rules": [{"ports": []}], "colour": "red"}`)),
		"required property name", "a string (uint64)", "a integer", `"today" is not an RFC 3339`, `"GONE" is not one of`,
		"labels.k: a string", "no property ports", "no property colour")
	check(t, d.ValidateResponse("tiny.things.delete", []byte(`{}`)))
	check(t, d.ValidateResponse("tiny.things.delete", []byte(`{"done": true}`)), "no response body")
	check(t, d.ValidateResponse("tiny.nope", []byte(`{}`)), "no such method")
	check(t, ValidateGCPError(404, []byte(`{"error": {"code": 404, "message": "x", "status": "NOT_FOUND"}}`)))
	check(t, ValidateGCPError(404, []byte(`{"error": {"code": 400, "message": "", "status": "MISSING"}}`)), "HTTP status 404", "is empty", "not a google.rpc.Code")
	check(t, ValidateGCPError(404, []byte(`not found`)), "not a Google error")
}

func TestVersionLess(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{{"1.9.0", "1.10.0", true}, {"1.43.11", "1.34.22", false}, {"1.29.27", "1.29.27", false}, {"1.2", "1.2.1", true}, {"2.0.0dev155", "1.43.11", false}} {
		if got := versionLess(tc.a, tc.b); got != tc.want {
			t.Errorf("versionLess(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
