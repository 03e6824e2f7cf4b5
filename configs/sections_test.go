package config

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// widgets is a kind's own section, as a kind's package declares it.
type widgets struct {
	MaxAge  Duration `json:"maxAge"`
	Label   string   `json:"label"`
	Caps    Caps     `json:"caps"`
	Include []string `json:"include"`
}

var widgetSpec = SectionSpec[widgets]{
	Key: "widgets",
	Doc: "deletes widgets nobody uses",
	Defaults: func(s *widgets, set func(string) bool) {
		Fill(set, "maxAge", &s.MaxAge, Duration(48*time.Hour))
		Fill(set, "label", &s.Label, "reclaim.dev/protect")
		Fill(set, "caps.maxDeletesPerRun", &s.Caps.MaxDeletesPerRun, 5)
	},
	Validate: func(s *widgets, report *Report) {
		if s.MaxAge.Std() < time.Hour {
			report.Add("maxAge", "%s is too short — use at least 1h", s.MaxAge)
		}
		if s.Caps.MaxDeletesPerRun < 0 {
			report.Add("caps.maxDeletesPerRun", "must not be negative")
		}
	},
}

// registerWidgets registers the section for one test, as a kind's init does.
func registerWidgets(t *testing.T) {
	t.Helper()
	Register(widgetSpec)
	t.Cleanup(func() {
		registryMu.Lock()
		defer registryMu.Unlock()
		registry = slices.DeleteFunc(registry, func(s section) bool { return s.Key == "widgets" })
	})
}

func TestRegisteredSectionDecodesDefaultsAndValidates(t *testing.T) {
	registerWidgets(t)
	c, err := Parse([]byte("clusters: [{name: a}]\nwidgets:\n  label: keep\n  caps: {maxDeletesPerRun: 0}\n"), "reclaim.yaml")
	if err != nil {
		t.Fatal(err)
	}
	w := SectionOf[widgets](c, "widgets")
	if w == nil {
		t.Fatal("widgets section missing")
	}
	want := widgets{MaxAge: Duration(48 * time.Hour), Label: "keep", Caps: Caps{MaxDeletesPerRun: 0}}
	if !reflect.DeepEqual(*w, want) {
		t.Errorf("section = %+v, want %+v (an explicit 0 is kept, the rest defaulted)", *w, want)
	}

	// Absent: the kind is off.
	c, err = Parse([]byte("clusters: [{name: a}]\n"), "reclaim.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if SectionOf[widgets](c, "widgets") != nil {
		t.Error("an absent section decoded as present")
	}
	// Present but empty ("widgets:"): on, with its defaults.
	c, err = Parse([]byte("clusters: [{name: a}]\nwidgets:\n"), "reclaim.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if w := SectionOf[widgets](c, "widgets"); w == nil || w.Label != "reclaim.dev/protect" {
		t.Errorf("empty section = %+v, want present with defaults", w)
	}
}

func TestRegisteredSectionProblemsNameTheirField(t *testing.T) {
	registerWidgets(t)
	_, err := Parse([]byte("clusters: [{name: a}]\nwidgets:\n  maxAge: 10m\n  lable: x\n  include: 3\n  caps: {maxDeletesPerRun: -1}\n"), "reclaim.yaml")
	var cerr *Error
	if !errors.As(err, &cerr) {
		t.Fatalf("got %v, want *Error", err)
	}
	got := err.Error()
	for _, want := range []string{
		`reclaim.yaml: widgets.maxAge: 10m is too short — use at least 1h`,
		`reclaim.yaml: widgets.lable: unknown field — did you mean "label"?`,
		`reclaim.yaml: widgets.include: expected a list, got number 3`,
		`reclaim.yaml: widgets.caps.maxDeletesPerRun: must not be negative`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack %q:\n%s", want, got)
		}
	}
	_, err = Parse([]byte("clusters: [{name: a}]\nwidgetz: {}\n"), "reclaim.yaml")
	if want := `reclaim.yaml: widgetz: unknown field — did you mean "widgets"?`; err == nil || err.Error() != want {
		t.Errorf("a misspelt section key: %v, want %s", err, want)
	}
}

func TestRegisteredSectionRoundTripsThroughRedacted(t *testing.T) {
	registerWidgets(t)
	c, err := Parse([]byte("clusters: [{name: a}]\nwidgets:\n  maxAge: 3d\n  include: [a-*]\n"), "reclaim.yaml")
	if err != nil {
		t.Fatal(err)
	}
	y, err := c.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(y, "printed")
	if err != nil {
		t.Fatalf("%v\n%s", err, y)
	}
	if !reflect.DeepEqual(SectionOf[widgets](back, "widgets"), SectionOf[widgets](c, "widgets")) {
		t.Errorf("printed and loaded back: %+v, want %+v\n%s", SectionOf[widgets](back, "widgets"), SectionOf[widgets](c, "widgets"), y)
	}
	if !slices.Contains(KeyPaths(), "widgets.caps.maxDeletesPerRun") {
		t.Error("KeyPaths does not name the section's keys")
	}
}

func TestRegisterRefusesAKeyWithTwoOwners(t *testing.T) {
	registerWidgets(t)
	for _, key := range []string{"widgets", "clusters"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%q) did not panic", key)
				}
			}()
			Register(SectionSpec[widgets]{Key: key})
		}()
	}
}
