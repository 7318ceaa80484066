package apimodel

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// BotocoreDataDir finds botocore's data directory: the one of the botocore python3
// imports (pip's, the AWS CLI's), else Debian's python3-botocore.
func BotocoreDataDir() (string, error) {
	var dirs []string
	if out, err := exec.Command("python3", "-c", "import botocore, os; print(os.path.dirname(botocore.__file__))").Output(); err == nil {
		dirs = append(dirs, filepath.Join(strings.TrimSpace(string(out)), "data"))
	}
	dirs = append(dirs, "/usr/lib/python3/dist-packages/botocore/data")
	for _, d := range dirs {
		if st, err := os.Stat(filepath.Join(d, "iam")); err == nil && st.IsDir() {
			return d, nil
		}
	}
	return "", errors.New("find botocore's service models: python3 imports no botocore and /usr/lib/python3/dist-packages/botocore is absent (install awscli)")
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
