package bucket

// Object is one object of a listing: its key, its version (S3's ETag,
// GCS's generation) and its size. A version that has not changed is a
// record that has not changed.
type Object struct {
	Key     string
	Version string
	Size    int64
}
