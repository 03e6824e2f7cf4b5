package testenv

import (
	"os"
	"time"
)

// StoreClock is the clock an s3server or gcsserver stamps objects with
// (S3's LastModified, GCS's updated): the real time until Set moves it.
// A test whose clock is simulated sets the store's to it before each
// write, so that what the store says of an object agrees with the times
// in it, as a real store's would.
type StoreClock struct{ file string }

// Set makes the store's time now, from this moment on (an offset from the
// real time, read by the server at each write).
func (c StoreClock) Set(now time.Time) error {
	return os.WriteFile(c.file, []byte(time.Until(now).String()), 0o600)
}
