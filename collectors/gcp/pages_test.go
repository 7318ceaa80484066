package gcp

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/time/rate"
)

// TestPages pages through a server's answers, and stops a server that repeats a page
// token instead of looping for ever and doubling its items.
func TestPages(t *testing.T) {
	tests := []struct {
		name    string
		tokens  map[string]string // token asked → next token answered
		want    int
		wantErr string
	}{
		{"one page", map[string]string{"": ""}, 1, ""},
		{"three pages", map[string]string{"": "a", "a": "b", "b": ""}, 3, ""},
		{"token repeated", map[string]string{"": "a", "a": "b", "b": "a"}, 0, `repeated page token "a"`},
		{"token loops on itself", map[string]string{"": "a", "a": "a"}, 0, "repeated page token"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &run{cfg: &Config{MaxAttempts: 1}, log: slog.New(slog.DiscardHandler), lim: rate.NewLimiter(rate.Inf, 1)}
			calls := 0
			got, err := pages(context.Background(), r, "test.List", func(_ context.Context, token string, items *[]string) (string, error) {
				calls++
				if calls > 10 {
					t.Fatal("pages did not stop")
				}
				*items = append(*items, "item "+strconv.Itoa(calls))
				return tc.tokens[token], nil
			})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || len(got) != tc.want {
				t.Fatalf("got %d items, %v; want %d", len(got), err, tc.want)
			}
		})
	}
}
