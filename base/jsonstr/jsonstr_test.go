package jsonstr

import (
	"encoding/json"
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
