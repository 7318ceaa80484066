package compliance

import (
	"time"

	"github.com/warden-sec/warden/findings"
)

// Document is one compliance report as it is exported: the framework's evaluation and
// what an auditor needs around it — where the evidence came from, the audit checkpoint
// it can be verified against, the fixes applied to the controls' resources, the scopes
// that could not be read, and the posture's history. Every report format (HTML, CSV,
// JSON, SARIF, OCSF) is written from a Document and nothing else.
type Document struct {
	Report *Report `json:"report"`
	// Generated is when the document was made; Report.At is the time it describes
	// (earlier with --at).
	Generated time.Time `json:"generated"`
	// Tool is the warden version that made it.
	Tool string `json:"tool"`
	// Source names the evidence: the scan (history id, snapshot, collected at) whose
	// findings were judged.
	Source Source `json:"source"`
	// Checkpoint is the audit log's latest checkpoint at or before Report.At, if any.
	Checkpoint *Checkpoint `json:"checkpoint,omitempty"`
	// Scopes are the scopes the evidence read, failed ones first: a control whose policies
	// ran over a failed scope is unknown, not pass.
	Scopes []Scope `json:"scopes"`
	// Fixes are the remediation actions that ended (verified, failed, rolled back) in the
	// window the report covers, on resources of the framework's policies.
	Fixes []Fix `json:"fixes"`
	// Trend is the framework's score over time, oldest first, ending with this report's:
	// at each earlier scan of the history, or daily from the daemon's state.
	Trend []TrendPoint `json:"trend"`
	// Convergence is how long findings of the framework's policies stayed open.
	Convergence Convergence `json:"convergence"`
}

// Source is the scan a document's findings come from.
type Source struct {
	ScanID      int64     `json:"scan_id"`
	Snapshot    string    `json:"snapshot"`
	CollectedAt time.Time `json:"collected_at"`
	Resources   int       `json:"resources"`
	Policies    int       `json:"policies"`
}

// Checkpoint is a signed head of the audit log: `warden audit verify` checks entries
// against it.
type Checkpoint struct {
	// Size is the number of entries it covers; Root the tree hash, base64.
	Size int64  `json:"size"`
	Root string `json:"root"`
	// Note is the whole signed note, as `warden audit checkpoint` prints it.
	Note string    `json:"note"`
	At   time.Time `json:"at"`
}

// Scope is one scope the evidence read, and how the read went.
type Scope struct {
	ID        string `json:"id"`
	Status    string `json:"status"` // ok, partial, failed
	Error     string `json:"error,omitempty"`
	Resources int    `json:"resources"`
}

// Fix is one remediation action and where the audit log recorded it.
type Fix struct {
	Action     string    `json:"action"`
	Policy     string    `json:"policy"`
	Controls   []string  `json:"controls"` // the framework's controls the policy maps to
	Remediator string    `json:"remediator"`
	Target     string    `json:"target"`
	Part       string    `json:"part,omitempty"`
	State      string    `json:"state"`
	At         time.Time `json:"at"`
	Actor      string    `json:"actor"`
	// AuditSeqs are the audit entries of the action's steps (0-based leaf indexes).
	AuditSeqs []int64 `json:"audit_seqs"`
}

// TrendPoint is the framework's score as one scan of the history left it.
type TrendPoint struct {
	At     time.Time `json:"at"`
	ScanID int64     `json:"scan_id"`
	Score  Score     `json:"score"`
	// Open counts the open findings of the framework's policies, by severity.
	Open map[string]int `json:"open"`
}

// Convergence measures time to converge: how long the framework's findings that were
// resolved stayed open, and how old the open ones are.
type Convergence struct {
	Resolved int `json:"resolved"`
	// MedianOpen and P90Open are over the resolved findings (zero if none).
	MedianOpen time.Duration `json:"median_open_ns"`
	P90Open    time.Duration `json:"p90_open_ns"`
	Open       int           `json:"open"`
	// OldestOpen is the age of the oldest open finding at Report.At.
	OldestOpen time.Duration `json:"oldest_open_ns"`
}

// OpenFindings returns the failing and unknown findings of every control, each once, in
// the order the controls list them.
func (d *Document) OpenFindings() []findings.Finding {
	seen := map[string]bool{}
	var out []findings.Finding
	for _, c := range d.Report.Controls {
		for _, list := range [][]findings.Finding{c.Failing, c.Unknown} {
			for _, f := range list {
				if !seen[f.Fingerprint] {
					seen[f.Fingerprint] = true
					out = append(out, f)
				}
			}
		}
	}
	return out
}
