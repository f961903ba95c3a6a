package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// The ALTCHA solver the room page runs (static/vendor/altcha), as npm's
// altcha at altchaVersion ships it; bash .ci/altcha fetches it again.
const altchaVersion = "2.3.0"

// TestVendoredAltcha fails when a vendored ALTCHA file (in static/, which
// the binary embeds) is not the pinned version's, or when .ci/altcha pins
// another version than this test records.
func TestVendoredAltcha(t *testing.T) {
	files := []struct{ path, sha256 string }{
		// package/dist_external/worker.js, the package's "altcha/worker"
		{"static/vendor/altcha/worker.js", "9ad5e1ba86463f19f5036181122bb38c055fef01e20e05ac9269bec9eede89c8"},
		// package/LICENSE.txt (MIT)
		{"static/vendor/altcha/LICENSE.txt", "74aa56cabe930086caec41910278796acea0f4b0582af3a83ff3d3271674c702"},
	}
	for _, f := range files {
		b, err := fs.ReadFile(os.DirFS(repoRoot), f.path)
		if err != nil {
			t.Errorf("%s: %v", f.path, err)
			continue
		}
		sum := sha256.Sum256(b)
		if got := hex.EncodeToString(sum[:]); got != f.sha256 {
			t.Errorf("%s: sha256 %s, want altcha@%s's %s (run bash .ci/altcha)", f.path, got, altchaVersion, f.sha256)
		}
	}
	script, err := os.ReadFile(filepath.Join(repoRoot, ".ci/altcha"))
	if err != nil {
		t.Fatal(err)
	}
	pinned := ""
	if m := regexp.MustCompile(`(?m)^VERSION=(\S+)$`).FindSubmatch(script); m != nil {
		pinned = string(m[1])
	}
	if pinned != altchaVersion {
		t.Errorf(".ci/altcha pins altcha@%q, this test altcha@%s", pinned, altchaVersion)
	}
}
