package demo

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/compliance"
	"github.com/warden-sec/warden/compliance/evidence"
	"github.com/warden-sec/warden/compliance/render"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/internal/atomicfile"
	"github.com/warden-sec/warden/internal/termesc"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediate/show"
)

// ask puts each fix that waits for approval to the person at the terminal, or, without
// one, writes down the commands that decide them.
func (d *run) ask(ctx context.Context, interactive bool) error {
	began := time.Now()
	if len(d.pending) == 0 {
		d.line("approve", 0, "nothing waits for approval")
		return nil
	}
	if !interactive {
		if err := d.writeApproveScript(); err != nil {
			return err
		}
		d.line("approve", 0, "no terminal: %s left pending; the commands deciding them → %s",
			fixes(len(d.pending)), d.rel(d.path("approve.sh")))
		return nil
	}
	byID := map[string]remediate.PlannedAction{}
	for _, act := range d.plan.Actions {
		byID[act.ID] = act
	}
	fmt.Fprintf(d.o.Stdout, "\n%s wait for approval. You decide as %s; each is shown with the exact change.\n", fixes(len(d.pending)), d.you)
	fmt.Fprintln(d.o.Stdout, "  a approve · d deny · s skip · A approve this one and all the rest · S skip all the rest · q stop asking")
	in := bufio.NewReader(d.o.Stdin)
	all := false
	for i, it := range d.pending {
		act := byID[it.Action]
		if !all {
			d.showAction(i, act)
		}
		answer := "a"
		if !all {
			var err error
			if answer, err = prompt(d.o.Stdout, in, "  approve, deny or skip? [a/d/s/A/S/q] "); err != nil {
				answer = "S" // the input ended: whatever is left stays pending
			}
		}
		switch answer {
		case "A":
			all = true
			answer = "a"
		case "S", "q":
			d.skipped += len(d.pending) - i
			fmt.Fprintf(d.o.Stdout, "  %s left pending\n", fixes(len(d.pending)-i))
			d.line("approve", time.Since(began), "%d approved, %d denied, %d left pending", d.approved, d.denied, d.skipped)
			return d.writeApproveScript()
		}
		if answer == "a" || answer == "d" {
			d.decide(ctx, in, it, answer == "a", all)
		} else {
			d.skipped++
		}
	}
	d.line("approve", time.Since(began), "%d approved, %d denied, %d left pending", d.approved, d.denied, d.skipped)
	return d.writeApproveScript()
}

// decide records the terminal's decision on one fix (asking why, for a denial); quiet
// leaves out what a second approver must still do, when every fix is being approved.
func (d *run) decide(ctx context.Context, in *bufio.Reader, it remediate.Item, approve, quiet bool) {
	reason := "approved in warden demo"
	if !approve {
		r, err := prompt(d.o.Stdout, in, "  why deny? ")
		if err != nil || r == "" {
			r = "denied in warden demo"
		}
		reason = r
	}
	req, err := d.e.Gate.Decide(ctx, it.Request, d.you, string(gates.ChannelCLI), approve, reason)
	if err != nil {
		fmt.Fprintf(d.o.Stdout, "  refused: %s\n", termesc.Escape(err.Error()))
		d.skipped++
		return
	}
	if !approve {
		d.denied++
		fmt.Fprintln(d.o.Stdout, "  denied: it will not run")
		return
	}
	d.approved++
	if n := len(req.Approvals()); n < req.Quorum && !quiet {
		fmt.Fprintf(d.o.Stdout, "  approved by you (%d of %d): it waits for %s too\n", n, req.Quorum, SecondApprover)
	}
}

func (d *run) showAction(i int, act remediate.PlannedAction) {
	w := d.o.Stdout
	fmt.Fprintf(w, "\n[%d/%d] %s · risk %s · %s\n", i+1, len(d.pending), termesc.Escape(act.Remediator), act.Risk,
		show.Approval(act.Approvals, []string{d.you, SecondApprover}))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  target\t%s\n", termesc.Escape(act.Target))
	fmt.Fprintf(tw, "  part\t%s\n", termesc.Escape(act.Part))
	fmt.Fprintf(tw, "  now\t%s\n", termesc.Escape(show.Clip(string(act.Before), 200)))
	fmt.Fprintf(tw, "  after\t%s\n", remediate.After(act.Remediator))
	fmt.Fprintf(tw, "  why\t%s: %s\n", act.Policy, termesc.Escape(act.Message))
	undo := "yes: warden rollback ACTION"
	if !act.Rollback.Possible {
		undo = "no: " + act.Rollback.Reason
	}
	fmt.Fprintf(tw, "  undo\t%s\n", termesc.Escape(undo))
	tw.Flush()
}

// prompt asks one question and returns the trimmed answer; io.EOF when input ended.
func prompt(w io.Writer, in *bufio.Reader, q string) (string, error) {
	fmt.Fprint(w, q)
	line, err := in.ReadString('\n')
	if err != nil && (line == "" || !errors.Is(err, io.EOF)) {
		fmt.Fprintln(w)
		return "", err
	}
	return strings.TrimSpace(line), nil
}

// writeApproveScript writes the commands that decide what still waits: one 'warden
// approve' per pending request, as whoever may still approve it.
func (d *run) writeApproveScript() error {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n# Written by warden demo: the fixes that wait for approval, one command each.\n")
	b.WriteString("# Run the lines you agree with; 'warden serve' (or 'warden apply') then applies them.\n")
	if d.hint != "" {
		fmt.Fprintf(&b, "# warden is not on your PATH: %s\n", d.hint)
	}
	fmt.Fprintf(&b, "# Deny instead: WARDEN_ACTOR=NAME %s deny ID --reason TEXT --config %s\n", d.warden, d.rel(d.path("warden.yaml")))
	for _, it := range d.pending {
		if it.State != remediate.StatePending {
			continue // approved already: it waits for a run, not for a decision
		}
		who := d.you
		if req, err := d.e.Gate.Get(context.Background(), it.Request); err == nil {
			for _, dec := range req.Decisions {
				if dec.Actor == d.you {
					who = SecondApprover
				}
			}
		}
		fmt.Fprintf(&b, "WARDEN_ACTOR=%s %s approve %s --config %s   # %s %s\n", shellQuote(who), d.warden, it.Request,
			d.rel(d.path("warden.yaml")), it.Remediator, oneLine(show.Clip(it.Part, 100)))
	}
	return os.WriteFile(d.path("approve.sh"), []byte(b.String()), 0o600)
}

// oneLine keeps a comment on one line, whatever a resource's name holds.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.@/") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// verify reads the clouds again, evaluates them, and checks that every applied fix's
// finding is gone; then verifies the audit log and signs a checkpoint of it.
func (d *run) verify(ctx context.Context) error {
	began := time.Now()
	if err := d.scan(ctx, "verify", "snapshot-after.json", &d.last); err != nil {
		return err
	}
	open := map[string]bool{}
	for _, f := range d.last.Findings {
		open[f.Fingerprint] = true
	}
	byID := map[string]remediate.PlannedAction{}
	for _, act := range d.plan.Actions {
		byID[act.ID] = act
	}
	var stillOpen []string
	for id := range d.applied {
		if open[byID[id].Finding] {
			stillOpen = append(stillOpen, id)
		}
	}
	if len(stillOpen) > 0 {
		return fmt.Errorf("verify: the findings of %s are still open after their fixes were verified: %s", show.Count(len(stillOpen), "action"), strings.Join(stillOpen, ", "))
	}
	signer, verifier, err := audit.LoadOrCreateKey(d.path("audit.key"))
	if err != nil {
		return err
	}
	cp, err := audit.New(d.e.Store, audit.Options{Signer: signer}).Checkpoint(ctx)
	if err != nil {
		return fmt.Errorf("sign an audit checkpoint: %w", err)
	}
	if err := os.WriteFile(d.path("checkpoint.txt"), cp, 0o600); err != nil {
		return err
	}
	if d.audit, err = audit.New(d.e.Store, audit.Options{}).Verify(ctx, verifier, cp); err != nil {
		return fmt.Errorf("verify the audit log: %w", err)
	}
	d.line("verify", time.Since(began), "read again: %s (%d fewer), every applied fix's finding gone; audit log intact (%d entries), checkpoint signed",
		show.Count(d.last.Summary.Findings, "finding"), d.first.Summary.Findings-d.last.Summary.Findings, d.audit.Entries)
	return nil
}

func (d *run) writeReport(ctx context.Context, fw *compliance.Framework) error {
	began := time.Now()
	doc, err := evidence.Gather(ctx, d.e.Store, audit.New(d.e.Store, audit.Options{}), fw,
		evidence.ForEngine(d.e.Engine, d.e.Config.Settings, "warden "+d.o.Version))
	if err != nil {
		return fmt.Errorf("gather the %s report: %w", fw.ID, err)
	}
	w, err := render.New("html")
	if err != nil {
		return err
	}
	d.reportPath = d.path(fw.ID + ".html")
	if err := atomicfile.Write(d.reportPath, func(out io.Writer) error { return w.Write(out, doc) }); err != nil {
		return err
	}
	d.score = doc.Report.Score
	s := d.score
	d.line("report", time.Since(began), "%s: %d pass, %d fail, %d unknown, %d not covered, %d manual → %s",
		fw.ID, s.Pass, s.Fail, s.Unknown, s.NotCovered, s.Manual, d.rel(d.reportPath))
	return nil
}

// saveWorld keeps the simulated clouds as the demo left them, for 'warden serve --sim'.
func (d *run) saveWorld() error {
	b, err := d.e.Sim.World()
	if err != nil {
		return err
	}
	head := "# The acme world as warden demo left it: its fixes applied. warden serve --sim continues from here.\n"
	return os.WriteFile(d.path("world-now.yaml"), append([]byte(head), b...), 0o600)
}
