package daemon

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-sec/warden/internal/secret"
)

// TestEventsHandler_isUrgentWork posts a change event and a body the parser refuses. A
// sweep's work must yield while the change is turned into re-reads (the first of the
// event's work), and not for the refused body, nor after the answer.
func TestEventsHandler_isUrgentWork(t *testing.T) {
	d := unstartedOnSQLite(t)
	const token = "0123456789abcdef0123456789abcdef0123456789abcdef"
	busy := map[string]bool{}
	srv := httptest.NewServer(d.EventsHandler(secret.New(token), EndpointHooks{Event: func(source, result string) {
		busy[result] = d.urgent.Busy()
	}}))
	t.Cleanup(srv.Close)
	b, err := os.ReadFile(filepath.Join("..", "events", "testdata", "aws", "ec2-authorize-ingress.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{string(b), `{"detail-type": "not an event"`} {
		req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if accepted, ok := busy["accepted"]; !ok || !accepted {
		t.Errorf("turning a change into re-reads: urgent work in progress %v (heard %v), want true", accepted, ok)
	}
	if busy["malformed"] {
		t.Error("a refused body counted as urgent work")
	}
	if d.urgent.Busy() {
		t.Error("urgent work still in progress after the answers")
	}
}
