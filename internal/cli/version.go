package cli

import (
	"context"
	"flag"
	"fmt"
	"runtime/debug"
)

// version is set at build time by `make build`
// (-ldflags "-X github.com/llmrelay/llmrelay/internal/cli.version=..."); when
// it is empty, the version comes from the binary's build information.
var version string

var versionCommand = &command{
	name:    "version",
	usage:   "version",
	summary: "print the version",
	about:   "Prints llmrelay's version, and the Go version and platform it was built with.",
	setup: func(_ *flag.FlagSet, env Env) func(context.Context, []string) error {
		return func(_ context.Context, args []string) error {
			if len(args) > 0 {
				return usagef("version", "version: unexpected argument %q", args[0])
			}
			fmt.Fprintln(env.Stdout, versionLine(env))
			return nil
		}
	},
}

// versionLine is "llmrelay <version> (<go version>, <os>/<arch>)". The
// version is the one make build stamped, else the module version Go
// recorded, else the VCS revision, else "(devel)".
func versionLine(env Env) string {
	bi := buildInfo(env)
	v := releaseVersion(bi)
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	platform := settings["GOOS"] + "/" + settings["GOARCH"]
	if platform == "/" {
		platform = ""
	}
	goVersion := bi.GoVersion
	if goVersion == "" {
		goVersion = "go (unknown version)"
	}
	if platform != "" {
		return fmt.Sprintf("llmrelay %s (%s, %s)", v, goVersion, platform)
	}
	return fmt.Sprintf("llmrelay %s (%s)", v, goVersion)
}

// buildInfo returns how the binary was built (empty when unknown).
func buildInfo(env Env) *debug.BuildInfo {
	read := env.BuildInfo
	if read == nil {
		read = debug.ReadBuildInfo
	}
	bi, ok := read()
	if !ok {
		return &debug.BuildInfo{}
	}
	return bi
}

// releaseVersion is the version make build stamped, else the module
// version Go recorded, else the VCS revision, else "(devel)".
func releaseVersion(bi *debug.BuildInfo) string {
	v := version
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if v == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	if rev := settings["vcs.revision"]; v == "" && rev != "" {
		v = rev[:min(12, len(rev))]
		if settings["vcs.modified"] == "true" {
			v += "-dirty"
		}
	}
	if v == "" {
		v = "(devel)"
	}
	return v
}
