package config

import (
	"testing"
	"time"
)

func TestParseRetention(t *testing.T) {
	for _, tc := range []struct {
		in    string
		d     time.Duration
		never bool
		ok    bool
	}{
		{"2h", 2 * time.Hour, false, true},
		{"7d", 7 * 24 * time.Hour, false, true},
		{"90m", 90 * time.Minute, false, true},
		{"1d12h", 36 * time.Hour, false, true},
		{" 36h ", 36 * time.Hour, false, true},
		{"never", 0, true, true},
		{"abc", 0, false, false},
		{"-1h", 0, false, false},
		{"", 0, false, false},
		{"7", 0, false, false},
		{"Never", 0, false, false},
	} {
		d, never, ok := ParseRetention(tc.in)
		if d != tc.d || never != tc.never || ok != tc.ok {
			t.Errorf("ParseRetention(%q) = %s, %t, %t; want %s, %t, %t", tc.in, d, never, ok, tc.d, tc.never, tc.ok)
		}
	}
}
