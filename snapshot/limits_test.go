package snapshot_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/snapshot"
)

// readAll drains a reader, returning the first error that is not io.EOF.
func readAll(rd *snapshot.Reader) error {
	for {
		_, err := rd.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func longValueSnapshot(field, value string) string {
	head := `{"version": 1, "collected_at": "2026-11-30T00:00:00Z", "resources": [` + "\n"
	res := `{"uid": "arn:aws:iam::1:root", "type": "aws.iam.root_user", "account": "1",` + "\n" +
		` "attributes": {"mfa_active": true, "access_keys_active": 0}, "name": "x"}`
	switch field {
	case "name":
		res = strings.Replace(res, `"name": "x"`, `"name": "`+value+`"`, 1)
	case "attributes.password_last_used":
		res = strings.Replace(res, `"access_keys_active": 0`, `"access_keys_active": 0, "password_last_used": "`+value+`"`, 1)
	case "attributes.access_keys_active":
		res = strings.Replace(res, `"access_keys_active": 0`, `"access_keys_active": `+value, 1)
	case "source":
		head = `{"version": 1, "source": "` + value + `", "resources": [` + "\n"
	}
	return head + res + "\n]}\n"
}

func TestReader_refusesValuesOverTheLimit(t *testing.T) {
	big := strings.Repeat("a", 2<<20)
	tests := []struct {
		name, field, value string
		limits             snapshot.Limits
		want               string
	}{
		{"long name", "name", big, snapshot.Limits{}, `line 3: resources[0].name: a string is over 1 MiB`},
		{"long attribute", "attributes.password_last_used", big, snapshot.Limits{}, `line 3: resources[0].attributes.password_last_used: a string is over 1 MiB`},
		{"long escaped string", "name", strings.Repeat(`\"`, 1<<20), snapshot.Limits{}, `resources[0].name: a string is over 1 MiB`},
		{"long number", "attributes.access_keys_active", strings.Repeat("9", 2<<20), snapshot.Limits{}, `resources[0].attributes.access_keys_active: a value is over 1 MiB`},
		{"long source", "source", big, snapshot.Limits{}, `line 1: source: a string is over 1 MiB`},
		{"resource over its limit", "name", strings.Repeat("a", 600<<10), snapshot.Limits{MaxResource: 512 << 10}, `line 2: resources[0]: the resource is over 512 KiB`},
		{"lower value limit", "name", strings.Repeat("a", 2000), snapshot.Limits{MaxValue: 1000}, `resources[0].name: a string is over 1000 bytes`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rd := snapshot.NewReader(strings.NewReader(longValueSnapshot(tt.field, tt.value)), "big.json", snapshot.WithLimits(tt.limits))
			err := readAll(rd)
			var se *snapshot.Error
			if !errors.As(err, &se) {
				t.Fatalf("err = %v, want a located *snapshot.Error", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v\nwant it to contain %q", err, tt.want)
			}
		})
	}
	// Within the limits the same shapes read fine.
	rd := snapshot.NewReader(strings.NewReader(longValueSnapshot("name", strings.Repeat(`a\"`, 1000))), "ok.json")
	if err := readAll(rd); err != nil {
		t.Fatal(err)
	}
}

// A 48 MiB string took minutes (quadratic scanning) before; the read is now linear, so
// even under the race detector it ends far inside the deadline.
func TestReader_longStringIsReadInLinearTime(t *testing.T) {
	for _, value := range []string{strings.Repeat("a", 48<<20), strings.Repeat(`a\"`, 16<<20)} {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		rd := snapshot.NewReader(strings.NewReader(longValueSnapshot("name", value)), "big.json",
			snapshot.WithContext(ctx), snapshot.WithLimits(snapshot.Limits{MaxValue: 64 << 20, MaxResource: 64 << 20}))
		if err := readAll(rd); err != nil {
			t.Fatal(err)
		}
		cancel()
	}
}

// slowSource yields endless whitespace inside the resources array, like a stuck pipe
// that never ends.
type slowSource struct{}

func (slowSource) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	time.Sleep(time.Millisecond)
	return len(p), nil
}

func TestReader_stopsWhenItsContextIsDone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	src := io.MultiReader(strings.NewReader(`{"version": 1, "resources": [{"uid": "a", "type": "aws.iam.user", "name": "`), slowSource{})
	rd := snapshot.NewReader(src, "stuck.json", snapshot.WithContext(ctx), snapshot.WithLimits(snapshot.Limits{MaxValue: 1 << 40, MaxResource: 1 << 40}))
	done := make(chan error, 1)
	go func() { done <- readAll(rd) }()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the reader did not stop after its context was cancelled")
	}
}

func BenchmarkReaderLongString(b *testing.B) {
	for _, size := range []int{1 << 20, 4 << 20, 16 << 20} {
		data := longValueSnapshot("name", strings.Repeat("a", size))
		b.Run(sizeName(size), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				rd := snapshot.NewReader(bytes.NewReader([]byte(data)), "b", snapshot.WithLimits(snapshot.Limits{MaxValue: 64 << 20, MaxResource: 64 << 20}))
				if err := readAll(rd); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func sizeName(n int) string {
	return strings.TrimSuffix(strings.TrimSuffix(time.Duration(n>>20).String(), "ns"), "s") + "MiB"
}
