// Package archtest keeps docs/ARCHITECTURE.md true: its tests fail when the
// "Who decides what" table names an owner that no longer exists, and when a
// package reaches where the architecture says it does not (the engine
// importing a transport), and when the repository tracks a compiled
// program instead of its source.
package archtest
