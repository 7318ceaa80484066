// Package deploy holds what runs warden elsewhere than a terminal, and the tests that
// keep it true to the code: kubernetes/base is a kustomize base for warden serve
// (replicas on PostgreSQL), slack/manifest.yaml the Slack app the approval channel
// needs. The repository's Dockerfile, which builds the image both use, is checked here
// too. The package has no code of its own: its tests build the base, decode every
// object strictly into the Kubernetes API types, read the example config with warden's
// config package, and run the built warden serve as the Deployment would.
package deploy
