package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/internal/bytesize"
	"github.com/warden-sec/warden/snapshot"
)

// limitFlags bound what one scan may read and spend: the snapshot reader's value and
// resource sizes, and each policy evaluation's time and the process's heap.
type limitFlags struct {
	maxValue    bytesize.Flag
	maxResource bytesize.Flag
	evalTimeout time.Duration
	memoryLimit bytesize.Flag
}

func (lf *limitFlags) register(cmd *cobra.Command) {
	d := snapshot.DefaultLimits()
	lf.maxValue, lf.maxResource = bytesize.Flag(d.MaxValue), bytesize.Flag(d.MaxResource)
	lf.evalTimeout, lf.memoryLimit = engine.DefaultEvalTimeout, bytesize.Flag(engine.DefaultMemoryLimit)
	f := cmd.Flags()
	f.Var(&lf.maxValue, "max-value-size", "refuse a snapshot holding a single string or number larger than this")
	f.Var(&lf.maxResource, "max-resource-size", "refuse a snapshot holding a resource larger than this")
	f.DurationVar(&lf.evalTimeout, "eval-timeout", lf.evalTimeout, "stop one policy evaluation on one resource after this long and record it as an eval error")
	f.Var(&lf.memoryLimit, "memory-limit", "heap above which the longest-running policy evaluation is stopped and recorded as an eval error")
}

// snapshotLimits are the reader's limits; values too large for an int are capped.
func (lf *limitFlags) snapshotLimits() snapshot.Limits {
	return snapshot.Limits{MaxValue: lf.maxValue.Int(), MaxResource: lf.maxResource.Int()}
}
