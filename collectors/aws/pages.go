package aws

import (
	"context"
	"iter"
)

// pager is what every paginator of the AWS SDK offers; Page is the operation's output
// and Options its service client's options.
type pager[Page, Options any] interface {
	HasMorePages() bool
	NextPage(ctx context.Context, optFns ...func(*Options)) (Page, error)
}

// pages yields a paginator's pages in order. A failed page is yielded once, with its
// error, and ends the sequence: the caller decides what the failure means (a scope
// failed or partial, a read that could not see), so that a denied or throttled page is
// never taken for the last one. Pacing and retries are the client's, page by page.
func pages[Page, Options any](ctx context.Context, p pager[Page, Options]) iter.Seq2[Page, error] {
	return func(yield func(Page, error) bool) {
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				yield(page, err)
				return
			}
			if !yield(page, nil) {
				return
			}
		}
	}
}

// collect reads every page and returns the items of each, in order, or the first
// error.
func collect[Page, Options, Item any](ctx context.Context, p pager[Page, Options], items func(Page) []Item) ([]Item, error) {
	var out []Item
	for page, err := range pages(ctx, p) {
		if err != nil {
			return nil, err
		}
		out = append(out, items(page)...)
	}
	return out, nil
}
