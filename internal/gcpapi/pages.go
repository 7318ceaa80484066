package gcpapi

import (
	"context"
	"strconv"

	"google.golang.org/api/iterator"
	"google.golang.org/grpc/codes"
)

// Pages reads a whole listing one page per Call, so that each page is paced and retried
// on its own. page fetches the page at token into *items and returns the next token; a
// fresh iterator per attempt keeps a failed attempt from poisoning the next (NextPage
// helps build one).
func Pages[T any](ctx context.Context, c *Clients, name string, page func(ctx context.Context, token string, items *[]T) (string, error)) ([]T, error) {
	var all []T
	token := ""
	seen := map[string]bool{}
	for {
		var items []T
		var next string
		err := c.Call(ctx, name, func(ctx context.Context) error {
			items = items[:0]
			var err error
			next, err = page(ctx, token, &items)
			return err
		})
		if err != nil {
			return nil, err
		}
		all = append(all, items...)
		if next == "" {
			return all, nil
		}
		// A server that hands back a token it gave before would loop for ever and
		// repeat its items: stop, and let the caller say what was not read.
		if seen[next] {
			return nil, &CallError{Call: name, Code: codes.Internal, Message: "the server repeated page token " + strconv.Quote(next)}
		}
		seen[next] = true
		token = next
	}
}

// NextPage takes one page of at most size items from it, starting at token, and returns
// the next token.
func NextPage[T any](it iterator.Pageable, size int, token string, items *[]T) (string, error) {
	return iterator.NewPager(it, size, token).NextPage(items)
}
