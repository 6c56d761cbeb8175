// Package deploy holds llmrelay's deployment files, checked by its tests:
// the Kubernetes manifests in kubernetes/ (decoded strictly into the
// Kubernetes API types, their wiring checked against llmrelay's own config
// loader) and the image's config in image/.
//
// It is a module of its own so that k8s.io/api and what it pulls in stay
// out of llmrelay's go.mod; `make test` runs it.
package deploy
