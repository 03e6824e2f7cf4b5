package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		`"90s"`:    90 * time.Second,
		`"15m"`:    15 * time.Minute,
		`"1h30m"`:  90 * time.Minute,
		`"7d"`:     7 * 24 * time.Hour,
		`"1d12h"`:  36 * time.Hour,
		`"0"`:      0,
		`0`:        0,
		`"250ms"`:  250 * time.Millisecond,
		`" 6h "`:   6 * time.Hour,
		`"100d1m"`: 100*24*time.Hour + time.Minute,
	} {
		var d Duration
		if err := json.Unmarshal([]byte(in), &d); err != nil {
			t.Errorf("%s: %v", in, err)
		} else if d.Std() != want {
			t.Errorf("%s = %v, want %v", in, d.Std(), want)
		}
	}
	for in, want := range map[string]string{
		`"2x"`:           `"2x" is not a duration — write 90s, 15m, 6h or 7d`,
		`90`:             `90 has no unit — write 90s, 15m, 6h or 7d`,
		`1.5`:            `1.5 has no unit — write 90s, 15m, 6h or 7d`,
		`"7"`:            `"7" is not a duration — write 90s, 15m, 6h or 7d`,
		`"d"`:            `"d" is not a duration — write 90s, 15m, 6h or 7d`,
		`""`:             `"" is not a duration — write 90s, 15m, 6h or 7d`,
		`"-5m"`:          `"-5m" is negative — durations here are lengths of time`,
		`true`:           `expected a duration, got true — write 90s, 15m, 6h or 7d`,
		`"99999999999d"`: `"99999999999d" is too long`,
	} {
		var d Duration
		err := json.Unmarshal([]byte(in), &d)
		if err == nil || err.Error() != want {
			t.Errorf("%s: got error %v, want %q", in, err, want)
		}
	}
	for d, want := range map[time.Duration]string{
		0:                       "0s",
		90 * time.Second:        "1m30s",
		2 * time.Minute:         "2m",
		6 * time.Hour:           "6h",
		24 * time.Hour:          "24h",
		36 * time.Hour:          "36h",
		90 * time.Minute:        "1h30m",
		7 * 24 * time.Hour:      "7d",
		1500 * time.Millisecond: "1.5s",
	} {
		if got := Duration(d).String(); got != want {
			t.Errorf("Duration(%v).String() = %q, want %q", d, got, want)
		}
		back, err := ParseDuration(Duration(d).String())
		if err != nil || back.Std() != d {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", Duration(d).String(), back.Std(), err, d)
		}
	}
}

func TestPercent(t *testing.T) {
	for in, want := range map[string]float64{
		`"85%"`:  0.85,
		`"85 %"`: 0.85,
		`85`:     0.85,
		`"85"`:   0.85,
		`"2.5%"`: 0.025,
		`"0.5%"`: 0.005,
		`0`:      0,
		`"0%"`:   0,
		`1`:      0.01,
		`100`:    1,
		`"100%"`: 1,
		`12.5`:   0.125,
	} {
		var p Percent
		if err := json.Unmarshal([]byte(in), &p); err != nil {
			t.Errorf("%s: %v", in, err)
		} else if diff := p.Fraction() - want; diff > 1e-12 || diff < -1e-12 {
			t.Errorf("%s = %v, want %v", in, p.Fraction(), want)
		}
	}
	for in, want := range map[string]string{
		`"150%"`: `"150%" is more than 100%`,
		`101`:    `101 is more than 100%`,
		`-5`:     `-5 is negative — a percentage is between 0% and 100%`,
		`"-1%"`:  `"-1%" is negative — a percentage is between 0% and 100%`,
		`0.85`:   `0.85 is ambiguous — write 0.85% for that many percent, or 85% for a fraction of one`,
		`"x%"`:   `"x%" is not a percentage — write 85%`,
		`"NaN%"`: `"NaN%" is not a percentage — write 85%`,
		`[85]`:   `expected a percentage, got [85] — write 85%`,
	} {
		var p Percent
		err := json.Unmarshal([]byte(in), &p)
		if err == nil || err.Error() != want {
			t.Errorf("%s: got error %v, want %q", in, err, want)
		}
	}
	for f, want := range map[float64]string{0.85: "85%", 0.1: "10%", 0.025: "2.5%", 0: "0%", 1: "100%", 0.07: "7%"} {
		if got := Percent(f).String(); got != want {
			t.Errorf("Percent(%v) = %q, want %q", f, got, want)
		}
	}
}

func TestSize(t *testing.T) {
	for in, want := range map[string]Size{
		`"50Gi"`:  50 << 30,
		`"1Ti"`:   1 << 40,
		`"500G"`:  500e9,
		`"1.5Gi"`: 3 << 29,
		`"2k"`:    2000,
		`"0"`:     0,
		`1024`:    1024,
		`0`:       0,
		`"1024"`:  1024,
	} {
		var s Size
		if err := json.Unmarshal([]byte(in), &s); err != nil {
			t.Errorf("%s: %v", in, err)
		} else if s != want {
			t.Errorf("%s = %d, want %d", in, s, want)
		}
	}
	for in, want := range map[string]string{
		`"10TB"`: `"10TB" is not a size — write a Kubernetes quantity such as 500Gi, 10Ti or 500G, or a number of bytes`,
		`"-1Gi"`: `"-1Gi" is negative`,
		`-1`:     `-1 is negative`,
		`"500m"`: `"500m" is not a whole number of bytes ("m" means milli; for megabytes write M or Mi)`,
		`"0.5"`:  `"0.5" is not a whole number of bytes`,
		`"9Ei"`:  `"9Ei" is too large`,
		`true`:   `expected a size, got true — write a Kubernetes quantity such as 500Gi, 10Ti or 500G, or a number of bytes`,
	} {
		var s Size
		err := json.Unmarshal([]byte(in), &s)
		if err == nil || err.Error() != want {
			t.Errorf("%s: got error %v, want %q", in, err, want)
		}
	}
	if got := Size(10 << 40).String(); got != "10Ti" {
		t.Errorf("String = %q, want 10Ti", got)
	}
	if got := Size(500e9).String(); got != "500G" {
		t.Errorf("String = %q, want 500G", got)
	}
	if got := Size(3 << 29).GiB(); got != 1.5 {
		t.Errorf("GiB = %v, want 1.5", got)
	}
}

// withSecret is a stand-in for the sections that will hold secrets.
type withSecret struct {
	Name  string  `json:"name"`
	Token Secret  `json:"token"`
	Extra *Secret `json:"extra,omitempty"`
}

// decodeSecret decodes YAML the way Parse does, into withSecret.
func decodeSecret(t *testing.T, yaml string) (withSecret, error) {
	t.Helper()
	var v withSecret
	tree, ps := parseTree([]byte(yaml))
	if ps != nil {
		t.Fatalf("bad test YAML: %v", ps)
	}
	d := newDecoder()
	d.decode("", tree, reflect.ValueOf(&v).Elem())
	if len(d.list) > 0 {
		return v, &Error{Source: "t.yaml", Problems: d.list}
	}
	return v, nil
}

func TestSecretFromEnvAndFile(t *testing.T) {
	t.Setenv("RECLAIM_TEST_TOKEN", "hunter2-env")
	dir := t.TempDir()
	file := filepath.Join(dir, "token")
	if err := os.WriteFile(file, []byte("hunter2-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	v, err := decodeSecret(t, "name: x\ntoken: {env: RECLAIM_TEST_TOKEN}\nextra: {file: "+file+"}\n")
	if err != nil {
		t.Fatal(err)
	}
	if v.Token.Value() != "hunter2-env" || v.Token.Source() != "environment variable RECLAIM_TEST_TOKEN" {
		t.Errorf("env secret = %q from %q", v.Token.Value(), v.Token.Source())
	}
	if v.Extra == nil || v.Extra.Value() != "hunter2-file" || v.Extra.Source() != "file "+file {
		t.Errorf("file secret = %+v", v.Extra)
	}

	// ~ is expanded in the file path.
	t.Setenv("HOME", dir)
	v, err = decodeSecret(t, "token: {file: ~/token}\n")
	if err != nil || v.Token.Value() != "hunter2-file" {
		t.Errorf("~/token: %q, %v", v.Token.Value(), err)
	}
	// A pod has no HOME: ~ is an error that says so, never a path under "/".
	t.Setenv("HOME", "")
	if _, err = decodeSecret(t, "token: {file: ~/token}\n"); err == nil || !strings.Contains(err.Error(), `"~/token": cannot expand ~`) {
		t.Errorf("~/token without HOME: %v", err)
	}
}

func TestSecretErrors(t *testing.T) {
	t.Setenv("RECLAIM_TEST_EMPTY", "")
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for yaml, want := range map[string]string{
		"token: {env: RECLAIM_TEST_UNSET_VARIABLE}": "t.yaml: token: environment variable RECLAIM_TEST_UNSET_VARIABLE is not set",
		"token: {env: RECLAIM_TEST_EMPTY}":          "t.yaml: token: environment variable RECLAIM_TEST_EMPTY is empty",
		"token: {env: ''}":                          "t.yaml: token: env: name the environment variable that holds the secret",
		"token: {file: " + dir + "/missing}":        "t.yaml: token: cannot read secret file: open " + dir + "/missing: no such file or directory",
		"token: {file: " + empty + "}":              "t.yaml: token: secret file " + empty + " is empty",
		"token: hunter2":                            "t.yaml: token: secrets are never written inline — write {env: NAME} or {file: /path}",
		"token: {value: hunter2}":                   "t.yaml: token: expected {env: NAME} or {file: /path} and nothing else — write {env: NAME} or {file: /path}",
		"token: {env: A, file: /b}":                 "t.yaml: token: set either env or file, not both",
		"token: {}":                                 "t.yaml: token: empty secret — write {env: NAME} or {file: /path}",
		"name: x\ntoken: 12\nextra: {env: RECLAIM_TEST_UNSET_VARIABLE}": "t.yaml: token: secrets are never written inline — write {env: NAME} or {file: /path}\n" +
			"t.yaml: extra: environment variable RECLAIM_TEST_UNSET_VARIABLE is not set",
	} {
		_, err := decodeSecret(t, yaml)
		if err == nil || err.Error() != want {
			t.Errorf("%s:\ngot  %v\nwant %s", yaml, err, want)
		}
	}
	// An inline secret must not be echoed back in the error.
	_, err := decodeSecret(t, "token: hunter2")
	if strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error reveals the inline value: %v", err)
	}
}

func TestSecretNeverPrinted(t *testing.T) {
	t.Setenv("RECLAIM_TEST_TOKEN", "hunter2")
	v, err := decodeSecret(t, "name: x\ntoken: {env: RECLAIM_TEST_TOKEN}\nextra: {env: RECLAIM_TEST_TOKEN}\n")
	if err != nil {
		t.Fatal(err)
	}
	var outputs []string
	for _, format := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
		outputs = append(outputs, fmt.Sprintf(format, v), fmt.Sprintf(format, v.Token), fmt.Sprintf(format, &v))
	}
	js, _ := json.Marshal(v)
	outputs = append(outputs, string(js))
	y, err := redactedYAML(&v)
	if err != nil {
		t.Fatal(err)
	}
	outputs = append(outputs, string(y))
	var logs bytes.Buffer
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("loaded", "token", v.Token, "config", v)
	outputs = append(outputs, logs.String())
	for _, out := range outputs {
		if strings.Contains(out, "hunter2") || strings.Contains(out, fmt.Sprintf("%x", "hunter2")) {
			t.Errorf("secret printed: %s", out)
		}
	}
	if want := "name: x\ntoken: <secret>\nextra: <secret>\n"; string(y) != want {
		t.Errorf("redacted YAML:\n%s\nwant\n%s", y, want)
	}
	if fmt.Sprint(v.Token) != "<secret>" || string(js) != `{"name":"x","token":"\u003csecret\u003e","extra":"\u003csecret\u003e"}` {
		t.Errorf("got %v and %s", v.Token, js)
	}

	// The whole-config printer uses the same path; no config field leaks either.
	c, err := Parse([]byte("clusters: [{name: a}]\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Redacted(); err != nil {
		t.Fatal(err)
	}
}
