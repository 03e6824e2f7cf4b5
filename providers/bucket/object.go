package bucket

import "time"

// Object is one object of a listing: its key, its version (S3's ETag,
// GCS's generation), its size, and when the store wrote it (S3's
// LastModified, GCS's updated; zero if the store did not say). A version
// that has not changed is a record that has not changed.
type Object struct {
	Key      string
	Version  string
	Size     int64
	Modified time.Time
}
