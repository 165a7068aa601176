package testenv_test

import (
	"fmt"
	"os"
)

// testenvDirGone checks that Stop removed the environment's directory.
func testenvDirGone(dir string) (bool, error) {
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		return false, fmt.Errorf("data directory %s still there after Stop (%v)", dir, err)
	}
	return true, nil
}
