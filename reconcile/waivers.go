package reconcile

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/warden-sec/warden/waivers"
)

// waiverFile is a waivers file read again whenever it changes on disk: the dashboard
// adds waivers to it while the daemon runs. A file that no longer reads keeps the last
// waivers that did, and says so once per change.
type waiverFile struct {
	path string

	mu      sync.Mutex
	modTime time.Time
	size    int64
	set     *waivers.Set
	digest  string // of the content the set was read from
	broken  string // the last content's error, reported once
}

// current returns the waivers as the file holds them now, and a digest of them for the
// evaluation version (a change re-evaluates every scope at its next read).
func (w *waiverFile) current(r *Reconciler) (*waivers.Set, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	fi, err := os.Stat(w.path)
	if err == nil && fi.ModTime().Equal(w.modTime) && fi.Size() == w.size && w.digest != "" {
		return w.set, w.digest
	}
	if err == nil {
		var data []byte
		if data, err = os.ReadFile(w.path); err == nil {
			var set *waivers.Set
			if set, err = waivers.Parse(data, w.path); err == nil {
				sum := sha256.Sum256(data)
				w.set, w.digest, w.modTime, w.size, w.broken = set, hex.EncodeToString(sum[:8]), fi.ModTime(), fi.Size(), ""
				return w.set, w.digest
			}
		}
	}
	if msg := err.Error(); msg != w.broken {
		w.broken = msg
		r.o.Logger.Error("waivers: the file does not read; the last waivers that did stay in force", "file", w.path, "err", err)
	}
	if w.digest == "" {
		w.digest = "unread"
	}
	return w.set, w.digest
}

// judging returns the waivers and the evaluation version a read judges with now.
func (r *Reconciler) judging() (*waivers.Set, string) {
	if r.wf == nil {
		return r.o.Waivers, r.o.EvalVersion
	}
	set, digest := r.wf.current(r)
	return set, fmt.Sprintf("%s+waivers:%s", r.o.EvalVersion, digest)
}
