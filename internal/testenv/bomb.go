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
	member := func(b []byte) []byte {
		var out bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&out, gzip.BestCompression)
		if _, err := zw.Write(b); err != nil {
			tb.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			tb.Fatal(err)
		}
		return out.Bytes()
	}
	head := member([]byte(`{"version":1,"agent":"`))
	// Every MiB member is the same bytes: compressed once, not mib times
	// (minutes under -race).
	a := member(bytes.Repeat([]byte("a"), 1<<20))
	out := make([]byte, 0, len(head)+mib*len(a))
	out = append(out, head...)
	for range mib {
		out = append(out, a...)
	}
	return out
}
