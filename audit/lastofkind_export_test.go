package audit

// LastOfKind is AppendChanged's query, for the test of its plan.
const LastOfKind = lastOfKind
