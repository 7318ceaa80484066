// Package reconcile is warden's daemon: the loop that keeps each scope converged. A read
// of a scope (an account's IAM, a region's security groups, a project's firewalls) is an
// Observation; the Reconciler compares it with the state it keeps of every resource (a
// hash of each, in the store), evaluates only the resources that changed (and every
// resource once per FullEvery, since policies measure ages), and moves each finding
// along its life — opened, seen, unknown while its scope cannot be read, resolved — with
// each opening and resolution in the audit log, in the same transaction. Plan then turns
// a scope's open findings into the actions `warden apply` would take.
//
// The view itself is kept by package state (reconcile/state), the one owner of its
// tables, which the dashboard, the compliance evidence and the daemon's status read too.
//
// Reads that fail resolve nothing: a failed scope's findings become unknown and its
// resources are kept; a partial read's missing resources are unknown, not deleted.
package reconcile
