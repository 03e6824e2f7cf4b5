package jsonstr

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestAppendIsJSONMarshal(t *testing.T) {
	for _, s := range []string{"", "plain ascii 0-9 ~!@#$%^*()_+={}[]|:;',.?/", `q"uote`, `back\slash`, "<b>&amp;</b>",
		"tab\tnew\nline\x00\x1f\x7f", "é ü 日本", "\u2028\u2029", "bad \xff utf-8", "ecr:123456789012/us-east-1/ci/svc@sha256:0f"} {
		want, _ := json.Marshal(s)
		if got := Append([]byte("x"), s); string(got) != "x"+string(want) {
			t.Errorf("Append(%q) = %s, json.Marshal %s", s, got[1:], want)
		}
	}
}

// Random strings of the bytes and runes that need care (fixed seed).
func TestAppendIsJSONMarshalForAnyString(t *testing.T) {
	pieces := []string{"a", "Z", " ", "~", "\x7f", `"`, `\`, "<", ">", "&", "\b", "\f", "\n", "\r", "\t", "\x00", "\x1f",
		"é", "—", "≥", "日", "\u2028", "\u2029", "\U0001F600", "\xff", "\xe2\x80", "\xed\xa0\x80", "\uFFFD"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var s strings.Builder
		for range rng.IntN(12) {
			s.WriteString(pieces[rng.IntN(len(pieces))])
		}
		want, _ := json.Marshal(s.String())
		if got := Append([]byte("x"), s.String()); string(got) != "x"+string(want) {
			t.Fatalf("Append(%q) = %s, json.Marshal %s", s.String(), got[1:], want)
		}
	}
}
