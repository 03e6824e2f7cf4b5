package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/inf.v0"
	"k8s.io/apimachinery/pkg/api/resource"
)

const durationHint = "write 90s, 15m, 6h or 7d"

// Duration is a time.Duration written the Go way (90s, 15m, 1h30m) or in whole
// days with a d suffix (7d, 1d12h). A bare number is rejected: it has no unit.
type Duration time.Duration

// Std returns d as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// String formats d the way it would be written in the file: 6h, 1h30m, 90s,
// and whole numbers of days from two days up as 2d, 7d.
func (d Duration) String() string {
	t := time.Duration(d)
	const day = 24 * time.Hour
	if t >= 2*day && t%day == 0 {
		return strconv.FormatInt(int64(t/day), 10) + "d"
	}
	s := t.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

var daysPrefix = regexp.MustCompile(`^(\d+)d`)

// ParseDuration parses what Duration accepts.
func ParseDuration(s string) (Duration, error) {
	bad := fmt.Errorf("%q is not a duration — %s", s, durationHint)
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, bad
	}
	var days time.Duration
	if m := daysPrefix.FindStringSubmatch(s); m != nil {
		n, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil || n > math.MaxInt64/int64(24*time.Hour) {
			return 0, fmt.Errorf("%q is too long", s)
		}
		days = time.Duration(n) * 24 * time.Hour
		s = s[len(m[0]):]
		if s == "" {
			return Duration(days), nil
		}
	}
	t, err := time.ParseDuration(s)
	if err != nil {
		return 0, bad
	}
	if t < 0 {
		return 0, fmt.Errorf("%q is negative — durations here are lengths of time", s)
	}
	if days > 0 && t > math.MaxInt64-days {
		return 0, fmt.Errorf("%q is too long", s)
	}
	return Duration(days + t), nil
}

// UnmarshalJSON accepts a duration string; a bare number other than 0 is an error.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		if n := string(b); n == "0" {
			*d = 0
			return nil
		} else if _, nerr := strconv.ParseFloat(n, 64); nerr == nil {
			return fmt.Errorf("%s has no unit — %s", n, durationHint)
		}
		return fmt.Errorf("expected a duration, got %s — %s", b, durationHint)
	}
	v, err := ParseDuration(s)
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// MarshalJSON writes d in the form UnmarshalJSON reads.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// Percent is a share written as "85%" or as a number of percent (85). It is
// stored as a fraction between 0 and 1. A bare number between 0 and 1, such as
// 0.85, is rejected as ambiguous: write 85% or 0.85%.
type Percent float64

// Fraction returns p between 0 and 1.
func (p Percent) Fraction() float64 { return float64(p) }

// String formats p as it would be written in the file, e.g. 85%.
func (p Percent) String() string {
	v := math.Round(float64(p)*100*1e6) / 1e6
	return strconv.FormatFloat(v, 'f', -1, 64) + "%"
}

// UnmarshalJSON reads "85%", "85" or 85.
func (p *Percent) UnmarshalJSON(b []byte) error {
	var (
		s    string
		sign bool
	)
	if err := json.Unmarshal(b, &s); err != nil {
		if _, nerr := strconv.ParseFloat(string(b), 64); nerr != nil {
			return fmt.Errorf("expected a percentage, got %s — write 85%%", b)
		}
		s = string(b)
	} else {
		s = strings.TrimSpace(s)
		var found bool
		s, found = strings.CutSuffix(s, "%")
		sign = found
		s = strings.TrimSpace(s)
	}
	shown := string(b)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Errorf("%s is not a percentage — write 85%%", shown)
	}
	switch {
	case f < 0:
		return fmt.Errorf("%s is negative — a percentage is between 0%% and 100%%", shown)
	case f > 100:
		return fmt.Errorf("%s is more than 100%%", shown)
	case !sign && f > 0 && f < 1:
		return fmt.Errorf("%s is ambiguous — write %s%% for that many percent, or %s%% for a fraction of one", shown,
			strconv.FormatFloat(f, 'f', -1, 64), strconv.FormatFloat(f*100, 'f', -1, 64))
	}
	*p = Percent(f / 100)
	return nil
}

// MarshalJSON writes p as "85%".
func (p Percent) MarshalJSON() ([]byte, error) { return json.Marshal(p.String()) }

const sizeHint = "write a Kubernetes quantity such as 500Gi, 10Ti or 500G, or a number of bytes"

// Size is a number of bytes, written as a Kubernetes quantity (500Gi, 10Ti,
// 500G) or as a plain integer number of bytes.
type Size int64

// GiB returns s in gibibytes (2^30 bytes).
func (s Size) GiB() float64 { return float64(s) / (1 << 30) }

// String formats s as the shorter Kubernetes quantity, e.g. 10Ti or 500G.
func (s Size) String() string {
	bin := resource.NewQuantity(int64(s), resource.BinarySI).String()
	dec := resource.NewQuantity(int64(s), resource.DecimalSI).String()
	if len(dec) < len(bin) {
		return dec
	}
	return bin
}

// ParseSize parses what Size accepts in its string form.
func ParseSize(str string) (Size, error) {
	q, err := resource.ParseQuantity(strings.TrimSpace(str))
	if err != nil {
		return 0, fmt.Errorf("%q is not a size — %s", str, sizeHint)
	}
	if q.Sign() < 0 {
		return 0, fmt.Errorf("%q is negative", str)
	}
	d := q.AsDec()
	whole := new(inf.Dec).Round(d, 0, inf.RoundDown)
	if whole.Cmp(d) != 0 {
		hint := ""
		if strings.HasSuffix(str, "m") {
			hint = ` ("m" means milli; for megabytes write M or Mi)`
		}
		return 0, fmt.Errorf("%q is not a whole number of bytes%s", str, hint)
	}
	// ParseQuantity clamps values beyond int64 to math.MaxInt64.
	n := whole.UnscaledBig()
	if !n.IsInt64() || n.Int64() == math.MaxInt64 {
		return 0, fmt.Errorf("%q is too large", str)
	}
	v := n.Int64()
	return Size(v), nil
}

// UnmarshalJSON reads a quantity string or an integer number of bytes.
func (s *Size) UnmarshalJSON(b []byte) error {
	var str string
	if err := json.Unmarshal(b, &str); err != nil {
		var n json.Number
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if dec.Decode(&n) != nil {
			return fmt.Errorf("expected a size, got %s — %s", b, sizeHint)
		}
		i, err := n.Int64()
		if err != nil {
			return fmt.Errorf("%s is not a whole number of bytes — %s", n, sizeHint)
		}
		if i < 0 {
			return fmt.Errorf("%s is negative", n)
		}
		*s = Size(i)
		return nil
	}
	v, err := ParseSize(str)
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// MarshalJSON writes s as a quantity string.
func (s Size) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

const redacted = "<secret>"

// Secret is a value that must not be written into the configuration file: a
// webhook URL, a password. The file names where to find it, as {env: NAME} or
// {file: /path}; it is read when the configuration is loaded. Every way of
// printing a Secret (String, %v, %#v, JSON, YAML, slog) shows <secret>.
type Secret struct {
	value  string
	source string
}

// Value returns the secret itself. Do not log it.
func (s Secret) Value() string { return s.value }

// Source says where the secret came from, e.g. "environment variable SLACK_URL"; it
// is safe to print.
func (s Secret) Source() string { return s.source }

// IsZero reports whether the secret was not configured.
func (s Secret) IsZero() bool { return s.source == "" }

// String returns <secret>.
func (s Secret) String() string { return redacted }

// GoString returns <secret>, so %#v does not reveal the value.
func (s Secret) GoString() string { return redacted }

// LogValue returns <secret> for log/slog.
func (s Secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// MarshalJSON writes "<secret>".
func (s Secret) MarshalJSON() ([]byte, error) { return json.Marshal(redacted) }

// MarshalYAML writes <secret>.
func (s Secret) MarshalYAML() (any, error) { return redacted, nil }

const secretHint = "write {env: NAME} or {file: /path}"

// UnmarshalJSON reads {env: NAME} or {file: /path} and resolves it.
func (s *Secret) UnmarshalJSON(b []byte) error {
	var ref struct {
		Env  *string `json:"env"`
		File *string `json:"file"`
	}
	if b = bytes.TrimSpace(b); len(b) == 0 || b[0] != '{' {
		return errors.New("secrets are never written inline — " + secretHint)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ref); err != nil {
		return errors.New("expected {env: NAME} or {file: /path} and nothing else — " + secretHint)
	}
	switch {
	case ref.Env != nil && ref.File != nil:
		return errors.New("set either env or file, not both")
	case ref.Env != nil:
		name := *ref.Env
		if name == "" {
			return errors.New("env: name the environment variable that holds the secret")
		}
		v, ok := os.LookupEnv(name)
		if !ok {
			return fmt.Errorf("environment variable %s is not set", name)
		}
		if v == "" {
			return fmt.Errorf("environment variable %s is empty", name)
		}
		*s = Secret{value: v, source: "environment variable " + name}
	case ref.File != nil:
		path, err := expandHome(*ref.File)
		if err != nil {
			return err
		}
		if path == "" {
			return errors.New("file: name the file that holds the secret")
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("cannot read secret file: %v", err)
		}
		v := strings.TrimRight(string(data), "\r\n")
		if v == "" {
			return fmt.Errorf("secret file %s is empty", path)
		}
		*s = Secret{value: v, source: "file " + path}
	default:
		return errors.New("empty secret — " + secretHint)
	}
	return nil
}

// expandHome replaces a leading "~" or "~/" with the user's home directory.
func expandHome(path string) (string, error) {
	if path != "~" && !strings.HasPrefix(path, "~/") {
		if strings.HasPrefix(path, "~") {
			return "", fmt.Errorf("%q: only ~ and ~/ are expanded, not ~user", path)
		}
		return path, nil
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return "", fmt.Errorf("%q: cannot expand ~: %v", path, err)
	}
	return home + path[1:], nil
}
