package archtest

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoBuildOutputTracked: the repository holds sources, not the programs
// built from them. A `go build ./internal/tools/...` in the root leaves its
// binary there, and `git add -A` would commit megabytes that every clone
// then downloads (.gitignore names the usual ones).
func TestNoBuildOutputTracked(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git to list the tracked files")
	}
	out, err := exec.Command(git, "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	// The magic numbers of the executables Go builds: ELF (Linux), Mach-O
	// 64-bit (macOS) and PE (Windows, "MZ").
	magics := [][]byte{[]byte("\x7fELF"), {0xcf, 0xfa, 0xed, 0xfe}, []byte("MZ")}
	for _, name := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		f, err := os.Open(filepath.Join(root, name))
		if err != nil {
			continue // deleted in the work tree, or a submodule
		}
		head := make([]byte, 4)
		n, _ := io.ReadFull(f, head)
		f.Close()
		for _, m := range magics {
			if bytes.HasPrefix(head[:n], m) {
				t.Errorf("%s is a compiled program: git rm --cached it, and name it in .gitignore", name)
			}
		}
	}
}
