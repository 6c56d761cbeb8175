// Package scaleout holds the tests of several llmrelay replicas sharing one
// redis-server: the built binary run as separate processes, as a
// deployment runs it, with shared rate and stream limits, a replica killed
// with streams open, Redis stopped and restarted under load, and resumable
// calls picked up on the other replica. It has no code of its own; see
// docs/scale-out.md and docs/resume.md.
package scaleout
