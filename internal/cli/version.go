package main

import "runtime/debug"

// version reports the module version the binary was built from.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return "llmrelay " + bi.Main.Version
	}
	return "llmrelay (devel)"
}
