package evidence

import (
	"context"
	"encoding/base64"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/compliance"
)

// checkpointAt returns the latest checkpoint the log stored at or before at, nil when
// none was.
func checkpointAt(ctx context.Context, log *audit.Log, at time.Time) (*compliance.Checkpoint, error) {
	cp, ok, err := log.CheckpointAt(ctx, at)
	if err != nil || !ok {
		return nil, err
	}
	return &compliance.Checkpoint{Size: cp.Size, Root: base64.StdEncoding.EncodeToString(cp.Root[:]), Note: cp.Note, At: cp.At}, nil
}
