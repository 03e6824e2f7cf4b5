package testenv

import (
	"bytes"
	"compress/gzip"
	"testing"
)

// GzipBomb is a gzipped record that decompresses to mib MiB of a JSON
// string that never ends: members of a MiB each, as gzip allows one after
// another, so that it is built in little time and its trailer says only
// the last member's size.
func GzipBomb(tb testing.TB, mib int) []byte {
	tb.Helper()
	var out bytes.Buffer
	member := func(b []byte) {
		zw, _ := gzip.NewWriterLevel(&out, gzip.BestCompression)
		if _, err := zw.Write(b); err != nil {
			tb.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			tb.Fatal(err)
		}
	}
	member([]byte(`{"version":1,"agent":"`))
	a := bytes.Repeat([]byte("a"), 1<<20)
	for range mib {
		member(a)
	}
	return out.Bytes()
}
