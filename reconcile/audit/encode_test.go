package audit

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// Every field of Record, set or left empty, is written as json.Marshal
// writes it: a field added to Record fails here until appendJSON writes it.
func TestAppendJSONWritesEveryField(t *testing.T) {
	for _, s := range []string{"plain", "needs \"escapes\" <&> \u2028 é \x01"} {
		var r Record
		v := reflect.ValueOf(&r).Elem()
		for i := range v.NumField() {
			f := v.Field(i)
			switch {
			case f.Type() == reflect.TypeOf(time.Time{}):
				f.Set(reflect.ValueOf(time.Date(2026, 5, 6, 7, 8, 9, 10, time.UTC)))
			case f.Kind() == reflect.String:
				f.SetString(s + " " + v.Type().Field(i).Name)
			case f.Kind() == reflect.Int64:
				f.SetInt(int64(1000 + i))
			default:
				t.Fatalf("Record.%s (%s): teach appendJSON and this test the field", v.Type().Field(i).Name, f.Type())
			}
		}
		for _, q := range []Record{r, {Time: r.Time, Action: r.Action}, {}} {
			got, err := q.appendJSON(nil)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := json.Marshal(q)
			if string(got) != string(want) {
				t.Fatalf("appendJSON:\n%s\njson.Marshal:\n%s", got, want)
			}
		}
	}
}
