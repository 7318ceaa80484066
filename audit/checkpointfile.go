package audit

import (
	"fmt"
	"os"
)

// ReadCheckpointFiles reads signed checkpoint files, as `warden audit checkpoint` wrote
// them, in the order given (warden audit verify --checkpoint, export --checkpoint).
func ReadCheckpointFiles(paths ...string) ([][]byte, error) {
	var cps [][]byte
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read checkpoint: %w", err)
		}
		cps = append(cps, b)
	}
	return cps, nil
}
