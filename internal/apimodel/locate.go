package apimodel

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// BotocoreDataDir finds botocore's data directory and botocore's version: the newest of
// the botocore python3 imports and those of pyenv's Pythons (pip's), else Debian's
// python3-botocore, else the copy Debian's awscli (version 2) bundles.
func BotocoreDataDir() (dir, version string, err error) {
	var pip []string
	if out, err := exec.Command("python3", "-c", "import botocore, os; print(os.path.dirname(botocore.__file__))").Output(); err == nil {
		pip = append(pip, strings.TrimSpace(string(out)))
	}
	home, _ := os.UserHomeDir()
	for _, root := range []string{os.Getenv("PYENV_ROOT"), filepath.Join(home, ".pyenv")} {
		if root != "" {
			found, _ := filepath.Glob(filepath.Join(root, "versions", "*", "lib", "python3*", "site-packages", "botocore"))
			pip = append(pip, found...)
		}
	}
	sort.SliceStable(pip, func(i, j int) bool { return versionLess(botocoreVersion(pip[j]), botocoreVersion(pip[i])) })
	for _, d := range append(pip, "/usr/lib/python3/dist-packages/botocore", "/usr/lib/python3/dist-packages/awscli/botocore") {
		if st, err := os.Stat(filepath.Join(d, "data", "iam")); err == nil && st.IsDir() {
			return filepath.Join(d, "data"), botocoreVersion(d), nil
		}
	}
	return "", "", errors.New("find botocore's service models: no botocore in python3, pyenv or Debian's python3-botocore or awscli (install awscli, or pip install botocore)")
}

var versionRE = regexp.MustCompile(`__version__\s*=\s*['"]([^'"]+)['"]`)

// botocoreVersion reads the version of the botocore package in dir; "" if unknown.
func botocoreVersion(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "__init__.py"))
	if err != nil {
		return ""
	}
	if m := versionRE.FindSubmatch(b); m != nil {
		return string(m[1])
	}
	return ""
}

// versionLess compares dotted versions numerically ("1.9" < "1.10"); text after a number
// is ignored.
func versionLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) || i < len(pb); i++ {
		var x, y int
		if i < len(pa) {
			x = leadingInt(pa[i])
		}
		if i < len(pb) {
			y = leadingInt(pb[i])
		}
		if x != y {
			return x < y
		}
	}
	return false
}

func leadingInt(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n, _ := strconv.Atoi(s[:i])
	return n
}

// GoogleAPIDir finds the module directory of google.golang.org/api, at the version the
// main module requires, where its discovery documents are.
func GoogleAPIDir() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "google.golang.org/api").Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		return "", fmt.Errorf("find google.golang.org/api's discovery documents: go list -m: %v", err)
	}
	return dir, nil
}
