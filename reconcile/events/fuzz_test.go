package events_test

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/warden-sec/warden/reconcile/events"
)

// FuzzParse: whatever the body, Parse does not panic, answers the same twice, returns
// only its own kinds of error, and every change it returns is whole: a provider, an
// account and the scope that belongs to it, uids of the provider's shape listed as
// Resources are, and a reason when the scope is to be read whole. Read answers the same
// changes, and denials that name a principal, an action, an account and a time; what
// Read hands over as denials Parse answers ErrUnknown for.
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob("testdata/*/*.json")
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range files {
		f.Add(read(f, file))
	}
	for _, s := range []string{`{}`, `[]`, `[{}]`, `null`, `{"detail-type":"AWS API Call via CloudTrail","detail":{}}`,
		`{"message":{"data":"e30="}}`, `{"Records":[{}]}`, `{"protoPayload":{}}`} {
		f.Add([]byte(s))
	}
	p := events.New(events.Options{MaxBody: 1 << 16, MaxEvents: 8})
	f.Fuzz(func(t *testing.T, body []byte) {
		cs, err := p.Parse(body)
		again, err2 := p.Parse(body)
		if !reflect.DeepEqual(cs, again) || (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) {
			t.Fatalf("two parses differ: %+v %v / %+v %v", cs, err, again, err2)
		}
		if err != nil {
			if !errors.Is(err, events.ErrMalformed) && !errors.Is(err, events.ErrUnknown) && !errors.Is(err, events.ErrTooLarge) {
				t.Fatalf("error of no kind of Parse: %v", err)
			}
			var e *events.Error
			if !errors.As(err, &e) || e.Field == "" || e.Reason == "" {
				t.Fatalf("error %v names no field or reason", err)
			}
		}
		ev, rerr := p.Read(body)
		if !reflect.DeepEqual(cs, ev.Changes) && !(len(cs) == 0 && len(ev.Changes) == 0) {
			t.Fatalf("Read's changes differ from Parse's: %+v / %+v", ev.Changes, cs)
		}
		if len(ev.Denials) > 0 && !errors.Is(err, events.ErrUnknown) {
			t.Fatalf("Read found denials %+v where Parse answered %v", ev.Denials, err)
		}
		if rerr != nil && err == nil {
			t.Fatalf("Read failed (%v) where Parse did not", rerr)
		}
		for _, d := range ev.Denials {
			if (d.Provider != "aws" && d.Provider != "gcp") || d.Account == "" || d.Principal == "" || len(d.Actions) == 0 ||
				d.Event == "" || d.Code == "" || d.Source == "" || d.At.IsZero() {
				t.Fatalf("incomplete denial %+v", d)
			}
		}
		for _, c := range cs {
			prefix := map[string]string{"aws": "arn:", "gcp": "//"}[c.Provider]
			if prefix == "" || c.Account == "" || !strings.HasPrefix(c.Scope, c.Provider+"/"+c.Account+"/") || c.Event == "" || c.Source == "" || c.At.IsZero() {
				t.Fatalf("incomplete change %+v", c)
			}
			if len(c.UIDs) != len(c.Resources) || (len(c.UIDs) == 0 && !c.WholeScope) || c.WholeScope != (c.Why != "") {
				t.Fatalf("change %+v: uids, resources and whole scope disagree", c)
			}
			for i, r := range c.Resources {
				if r.UID != c.UIDs[i] || !strings.HasPrefix(r.UID, prefix) || r.Type == "" || !strings.HasPrefix(r.Type, c.Provider+".") ||
					strings.ContainsAny(r.UID, " \t\n\"") {
					t.Fatalf("change %+v: resource %+v", c, r)
				}
			}
		}
	})
}
