package remediators

import (
	"context"
	"encoding/json"
	"time"
)

// Stepper is a remediator whose fix takes several steps spread over time: rotating a key
// creates and hands over a new one, waits for its users to move, then retires the old
// one. The caller (package remediate) records each step's progress with its audit entry
// before it runs the next, so that a crash resumes at the right step, and runs a step
// only when it is due.
//
// Apply is not called for a Stepper; Rollback is replaced by Undo.
type Stepper interface {
	Remediator
	// Step runs the next step of a after p (the zero Progress before the first) at now,
	// and returns the progress after it. A step must be safe to run again after a crash
	// in its middle: it finds what its earlier attempt did and completes or redoes it.
	// The returned progress says when the next step is due, or that the fix waits for
	// a person (Hold), or that it is done.
	Step(ctx context.Context, a Action, p Progress, now time.Time) (Progress, error)
	// Undo reverts what the steps up to p did, where the cloud allows it; ErrNoRollback
	// (wrapped, with the reason) when it does not.
	Undo(ctx context.Context, a Action, p Progress) error
}

// Progress is where a multi-step fix stands. It holds no secret: the caller stores it in
// plain text and shows it.
type Progress struct {
	// Step names the last step completed ("" before the first).
	Step string `json:"step"`
	// Due is when the next step may run; zero means at once.
	Due time.Time `json:"due,omitzero"`
	// Hold says why the next step waits for a person (the old key is still in use); the
	// step is tried again when due.
	Hold string `json:"hold,omitempty"`
	// Done is set when the last step completed: the fix is then verified like any other.
	Done bool `json:"done,omitempty"`
	// Data is the remediator's own record of what it did (ids of what it created).
	Data json.RawMessage `json:"data,omitempty"`
}
