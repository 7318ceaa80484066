package events

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"
)

// EventPatterns are the event patterns of the EventBridge rules whose API destination is
// POST /v1/events, one a rule: the CloudTrail write calls Parse maps that succeeded
// (errorCode absent), and ACM's certificate events. With them a sender sends nothing
// Parse answers ErrUnknown for, so an unknown event is a sender's configuration gone
// stale, counted and answered 400.
//
// CloudTrail events of IAM, a global service, reach EventBridge in us-east-1 only
// (us-gov-west-1 and cn-north-1 in their partitions): the rule for them lives there.
// EC2 and ACM events reach EventBridge in their own region.
func EventPatterns() []string {
	sources := map[string]bool{}
	var eventSources, names []string
	seen := map[string]bool{}
	for _, call := range AWSCalls() {
		service, name, _ := strings.Cut(call, ":")
		if !sources[service] {
			sources[service] = true
			eventSources = append(eventSources, service+".amazonaws.com")
		}
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	sort.Strings(names)
	src := make([]string, 0, len(sources))
	for s := range sources {
		src = append(src, "aws."+s)
	}
	sort.Strings(src)
	acm := make([]string, 0, len(acmEvents))
	for dt := range acmEvents {
		acm = append(acm, dt)
	}
	sort.Strings(acm)
	calls := map[string]any{
		"source":      src,
		"detail-type": []string{detailAPICall},
		"detail": map[string]any{
			"eventSource": eventSources,
			"eventName":   names,
			"errorCode":   []any{map[string]bool{"exists": false}},
		},
	}
	certs := map[string]any{"source": []string{"aws.acm"}, "detail-type": acm}
	return []string{mustJSON(calls), mustJSON(certs)}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // maps of strings always marshal
	}
	return string(b)
}

// LogFilter is the Cloud Logging filter of the log sink (or of the Pub/Sub push
// subscription's topic) that sends POST /v1/events what Parse maps and nothing else:
// Admin Activity audit logs of the calls in GCPCalls that did not fail. Use it on an
// aggregated sink at the organization or folder to see every project's changes, and on
// the projects' own sinks otherwise.
func LogFilter() string {
	byService := map[string][]string{}
	for event, call := range gcpCalls {
		byService[call.service] = append(byService[call.service], loggedMethod(call.service, event))
	}
	services := make([]string, 0, len(byService))
	for s := range byService {
		services = append(services, s)
	}
	sort.Strings(services)
	var clauses []string
	for _, s := range services {
		methods := byService[s]
		sort.Strings(methods)
		re := "^(" + strings.Join(methods, "|") + ")$"
		clauses = append(clauses, `(protoPayload.serviceName="`+s+`" AND protoPayload.methodName=~"`+re+`")`)
	}
	return `logName:"cloudaudit.googleapis.com%2Factivity" AND NOT protoPayload.status.code:* AND (` +
		strings.Join(clauses, " OR ") + ")"
}

// loggedMethod is the regular expression of the methodName audit logs give the call
// Parse names event: Compute Engine's with any API version, a bare method without its
// service. Dots are written [.] so that the filter needs no backslash escapes.
func loggedMethod(service, event string) string {
	short := strings.TrimSuffix(service, ".googleapis.com")
	m := event
	prefix := ""
	switch {
	case short == "compute":
		prefix = "(v1|beta|alpha)[.]"
	case strings.HasPrefix(event, short+".") && !strings.Contains(event[len(short)+1:], "."):
		m = event[len(short)+1:]
	}
	return prefix + strings.ReplaceAll(regexp.QuoteMeta(m), `\.`, "[.]")
}

// DenialPattern is the event pattern of an EventBridge rule that sends POST /v1/events
// the calls refused for want of a permission, of any service (deniedCodes), for the
// daemon to compare with the right-sizing fixes it applied (Read's Denials). It is a
// rule of its own, beside EventPatterns': CloudTrail delivers a service's events in the
// region of the call (IAM's and other global services' in us-east-1), so the rule is
// needed in each region the principals act in.
func DenialPattern() string {
	codes := make([]string, 0, len(deniedCodes))
	for c := range deniedCodes {
		codes = append(codes, c)
	}
	sort.Strings(codes)
	return mustJSON(map[string]any{
		"source":      []any{map[string]string{"prefix": "aws."}},
		"detail-type": []string{detailAPICall},
		"detail":      map[string]any{"errorCode": codes},
	})
}

// DenialLogFilter is the Cloud Logging filter of a log sink that sends POST /v1/events
// the audit log entries of calls refused with PERMISSION_DENIED, Admin Activity and Data
// Access alike, that name their caller.
func DenialLogFilter() string {
	return `logName:"cloudaudit.googleapis.com" AND protoPayload.status.code=7 AND protoPayload.authenticationInfo.principalEmail:*`
}
