package state

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"reclaim.dev/reclaim/reconcile/engine"
)

// The encoder's journal is json.Marshal's, byte for byte, as marks come,
// change and go, with keys and reasons that need escaping.
func TestJournalEncoderIsJSONMarshal(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	var e journalEncoder
	pending := map[string]engine.Pending{}
	check := func(pending map[string]engine.Pending, dropped []string) {
		t.Helper()
		want, err := json.Marshal(struct {
			SaveID  string                    `json:"saveID"`
			Pending map[string]engine.Pending `json:"pending"`
			Dropped []string                  `json:"dropped,omitempty"`
		}{"s<1>", pending, dropped})
		if err != nil {
			t.Fatal(err)
		}
		var got []byte
		if err := e.write("s<1>", pending, dropped, func(b []byte) error { got = append([]byte(nil), b...); return nil }); err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("encoder:\n%s\njson.Marshal:\n%s", got, want)
		}
	}
	check(nil, nil)
	check(pending, nil)
	for i := range 30 {
		pending[fmt.Sprintf("ecr:1/r/a&b<%d>@sha256:%02d", i%7, i)] = engine.Pending{Kind: "ecr-image", Started: t0.Add(time.Duration(i) * time.Second),
			Reason: "unused \"old\" <image> & co", Identity: "i", Run: "run", SizeGB: int64(i), Bytes: int64(i) << 20}
		if i%5 == 0 {
			delete(pending, fmt.Sprintf("ecr:1/r/a&b<%d>@sha256:%02d", (i+3)%7, i-2))
		}
		if i%4 == 0 {
			for id, p := range pending { // a mark made anew for the same id
				p.Started = p.Started.Add(time.Minute)
				pending[id] = p
				break
			}
		}
		var dropped []string
		if i%3 == 0 {
			dropped = []string{"x", fmt.Sprintf("y<%d>", i)}
		}
		check(pending, dropped)
	}
	clear(pending)
	check(pending, nil)
	if len(e.marks) != 0 {
		t.Fatalf("%d marks kept after the journal emptied", len(e.marks))
	}
}

// Every field of engine.Pending, set, is written as json.Marshal writes
// it: a field added to Pending fails here until appendMark writes it.
func TestAppendMarkWritesEveryField(t *testing.T) {
	for _, s := range []string{"plain", "needs \"escapes\" <&> \u2028 é \x01"} {
		var p engine.Pending
		v := reflect.ValueOf(&p).Elem()
		for i := range v.NumField() {
			f := v.Field(i)
			switch {
			case f.Type() == reflect.TypeOf(time.Time{}):
				f.Set(reflect.ValueOf(time.Date(2026, 5, 6, 7, 8, 9, 10, time.FixedZone("x", 3600))))
			case f.Kind() == reflect.String:
				f.SetString(s + " " + v.Type().Field(i).Name)
			case f.Kind() == reflect.Int64:
				f.SetInt(int64(1000 + i))
			default:
				t.Fatalf("engine.Pending.%s (%s): teach appendMark and this test the field", v.Type().Field(i).Name, f.Type())
			}
		}
		for _, q := range []engine.Pending{p, {Kind: p.Kind, Started: p.Started, Reason: p.Reason}} {
			got, err := appendMark(nil, s, q)
			if err != nil {
				t.Fatal(err)
			}
			k, _ := json.Marshal(s)
			v, _ := json.Marshal(q)
			if want := string(k) + ":" + string(v); string(got) != want {
				t.Fatalf("appendMark:\n%s\njson.Marshal:\n%s", got, want)
			}
		}
	}
}
