package dashboard

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/waivers"
)

// maxWaiverDays bounds a waiver made from the page: an accepted risk is looked at again
// within a year. A longer one is a reviewed edit of the file.
const maxWaiverDays = 366

// Waiver is a waiver the findings page adds.
type Waiver struct {
	Policy, Resource, Reason, Owner string
	// Expires is the last day the waiver holds (it ends at the start of the next day,
	// UTC, as a date in the file does).
	Expires time.Time
}

func (d *Dashboard) waive(w http.ResponseWriter, r *http.Request, p *Principal) {
	wv := Waiver{Policy: strings.TrimSpace(r.PostFormValue("policy")), Resource: strings.TrimSpace(r.PostFormValue("resource")),
		Reason: strings.TrimSpace(r.PostFormValue("reason")), Owner: strings.TrimSpace(r.PostFormValue("owner"))}
	if wv.Owner == "" {
		wv.Owner = p.Name
	}
	exp, err := time.Parse(time.DateOnly, strings.TrimSpace(r.PostFormValue("expires")))
	if err != nil {
		d.setFlash(w, true, "Not waived: the expiry %q is not a date (YYYY-MM-DD).", r.PostFormValue("expires"))
		back(w, r, "/findings")
		return
	}
	wv.Expires = exp
	if err := d.AddWaiver(r.Context(), wv, p.Name, r.PostFormValue("fingerprint")); err != nil {
		var refused *waiverRefusal
		if errors.As(err, &refused) {
			d.setFlash(w, true, "Not waived: %s.", err)
		} else {
			// Reading, checking or replacing the file failed: the details (paths on the
			// server, the error of its file system) are the operator's, in the log.
			d.log.Error("dashboard: add a waiver", "policy", wv.Policy, "resource", wv.Resource, "actor", p.Name, "err", err)
			d.setFlash(w, true, "Not waived: warden could not update its waiver file (the server's log says why); nothing changed.")
		}
		back(w, r, "/findings")
		return
	}
	d.setFlash(w, false, "Waived %s on %s until %s (owner %s), in %s. It suppresses the finding from the next scan on, and from the daemon's next read of its scope.",
		wv.Policy, wv.Resource, wv.Expires.Format(time.DateOnly), wv.Owner, d.o.WaiverFile)
	back(w, r, "/findings")
}

// waiverRefusal is a waiver the page refuses for what was typed into it, as opposed to
// a failure to edit the file: its message is for the person who typed it.
type waiverRefusal struct{ msg string }

func (e *waiverRefusal) Error() string { return e.msg }

func refuseWaiver(format string, args ...any) error {
	return &waiverRefusal{msg: fmt.Sprintf(format, args...)}
}

// AddWaiver appends wv to the waiver file, as actor, and audits it (KindWaiverAdded,
// subject the finding's fingerprint when given): the same file warden scan, plan, apply
// and the daemon read, edited as a person would, its comments kept. The new content is
// read back with the waiver parser and checked against the loaded policies before it
// replaces the file (atomically), so that the page can never leave a file the CLI
// refuses. The audit entry is written in the transaction the file is replaced in.
func (d *Dashboard) AddWaiver(ctx context.Context, wv Waiver, actor, fingerprint string) error {
	file := d.o.WaiverFile
	if file == "" {
		return refuseWaiver("the config names no waiver file (waivers:)")
	}
	today := d.now().UTC().Truncate(24 * time.Hour)
	switch {
	case wv.Policy == "" || wv.Resource == "":
		return refuseWaiver("a waiver names a policy and a resource")
	case strings.ContainsAny(wv.Policy+wv.Resource, "*?"):
		return refuseWaiver("the page waives one policy on one resource: a glob is a reviewed edit of the waiver file")
	case wv.Reason == "":
		return refuseWaiver("a waiver needs a reason: why the risk is accepted")
	case wv.Expires.Before(today):
		return refuseWaiver("the expiry %s is past: a waiver ends in the future", wv.Expires.Format(time.DateOnly))
	case wv.Expires.After(today.AddDate(0, 0, maxWaiverDays)):
		return refuseWaiver("the expiry %s is more than %d days away: waivers from the page last a year at most", wv.Expires.Format(time.DateOnly), maxWaiverDays)
	}
	for _, s := range []string{wv.Policy, wv.Resource, wv.Reason, wv.Owner} {
		if strings.ContainsAny(s, "\x00\r\n") {
			return refuseWaiver("a waiver's fields are single lines")
		}
		if !utf8.ValidString(s) {
			return refuseWaiver("a waiver's fields are UTF-8 text")
		}
	}
	d.waiverMu.Lock()
	defer d.waiverMu.Unlock()
	old, mode, err := readWaiverFile(file)
	if err != nil {
		return err
	}
	updated, err := appendWaiver(old, wv)
	if err != nil {
		return fmt.Errorf("edit %s: %w", file, err)
	}
	set, err := waivers.Parse(updated, file)
	if err != nil {
		return fmt.Errorf("the edited waiver file would not read back: %w", err)
	}
	if len(d.o.Policies) > 0 {
		if err := set.CheckPolicies(d.o.Policies); err != nil {
			// Said without the file's place on the server, which is not the visitor's.
			var we *waivers.Error
			if errors.As(err, &we) {
				return refuseWaiver("%s", we.Msg)
			}
			return err
		}
	}
	if active, _ := set.Match(wv.Policy, wv.Resource, d.now()); active == nil {
		return errors.New("the edited waiver file does not waive the finding")
	}
	return d.o.Store.InTx(ctx, func(tx *store.Tx) error {
		subject := fingerprint
		if subject == "" {
			subject = wv.Policy + " " + wv.Resource
		}
		if _, err := d.o.Log.Append(ctx, tx, audit.Event{Actor: actor, Kind: KindWaiverAdded, Subject: subject, Data: map[string]any{
			"policy": wv.Policy, "resource": wv.Resource, "reason": wv.Reason, "owner": wv.Owner,
			"expires": wv.Expires.Format(time.DateOnly), "file": file, "channel": "web"}}); err != nil {
			return err
		}
		// Last in the transaction: a failed write rolls the audit entry back with it.
		return writeFileAtomic(file, updated, mode)
	})
}

func readWaiverFile(file string) ([]byte, fs.FileMode, error) {
	b, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return []byte("# Accepted risks: each waiver suppresses one policy's findings on matching resources until it expires.\nwaivers:\n"), 0o644, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("read the waiver file: %w", err)
	}
	st, err := os.Stat(file)
	if err != nil {
		return nil, 0, fmt.Errorf("read the waiver file: %w", err)
	}
	// It must read today as the CLI reads it: a file that is already wrong is fixed by
	// hand, not edited further.
	if _, err := waivers.Parse(b, file); err != nil {
		return nil, 0, err
	}
	return b, st.Mode().Perm(), nil
}

// appendWaiver adds one waiver to the waivers: list of a waiver file's YAML.
func appendWaiver(data []byte, wv Waiver) ([]byte, error) {
	var doc yaml.Node
	if len(bytes.TrimSpace(data)) > 0 {
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return nil, err
		}
	}
	if doc.Kind == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode}}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, errors.New("the file is not a mapping with a waivers list")
	}
	var list *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "waivers" {
			list = root.Content[i+1]
		}
	}
	if list == nil {
		list = &yaml.Node{Kind: yaml.SequenceNode}
		root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "waivers"}, list)
	}
	if list.Kind == yaml.ScalarNode && list.Tag == "!!null" {
		*list = yaml.Node{Kind: yaml.SequenceNode, HeadComment: list.HeadComment, LineComment: list.LineComment}
	}
	if list.Kind != yaml.SequenceNode {
		return nil, errors.New("waivers is not a list")
	}
	str := func(v string) *yaml.Node {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v, Style: yaml.DoubleQuotedStyle}
	}
	item := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
		str("policy"), str(wv.Policy), str("resource"), str(wv.Resource), str("reason"), str(wv.Reason),
		str("owner"), str(wv.Owner), str("expires"), str(wv.Expires.Format(time.DateOnly)),
	}}
	for i := 0; i < len(item.Content); i += 2 {
		item.Content[i].Style = 0 // keys plain
	}
	list.Content = append(list.Content, item)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeFileAtomic replaces file with data through a temporary file in its directory,
// so that a reader sees the old file or the new one, never a part.
func writeFileAtomic(file string, data []byte, mode fs.FileMode) error {
	dir := filepath.Dir(file)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(file)+".*")
	if err != nil {
		return fmt.Errorf("write the waiver file: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write the waiver file: %w", err)
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return fmt.Errorf("write the waiver file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write the waiver file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write the waiver file: %w", err)
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		return fmt.Errorf("write the waiver file: %w", err)
	}
	return nil
}
