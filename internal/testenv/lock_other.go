//go:build !unix

package testenv

import "errors"

func lockFile(path string, waiting func()) (unlock func(), err error) {
	return nil, errors.New("testenv: building test binaries is only supported on unix")
}
