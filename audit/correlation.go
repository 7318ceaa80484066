package audit

import "context"

type correlationKey struct{}

// WithCorrelation returns a context whose audit entries carry the correlation id: the
// daemon sets it per job (from the tick or the change event that began the work), so
// the finding an event opened, the action it planned and each step of that action can
// be found together in the log. The id is stored in each entry's data as
// "correlation", where the entry's hash covers it.
func WithCorrelation(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, correlationKey{}, id)
}

// Correlation is the context's correlation id, or "".
func Correlation(ctx context.Context) string {
	id, _ := ctx.Value(correlationKey{}).(string)
	return id
}
