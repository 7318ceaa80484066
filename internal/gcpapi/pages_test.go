package gcpapi

import (
	"context"
	"strconv"
	"strings"
	"testing"
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
			c := newClients(Options{MaxAttempts: 1, RateLimit: 1e6})
			calls := 0
			got, err := Pages(context.Background(), c, "test.List", func(_ context.Context, token string, items *[]string) (string, error) {
				calls++
				if calls > 10 {
					t.Fatal("Pages did not stop")
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
