package layout

import (
	"testing"
	"time"
)

func TestHumanDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		42 * time.Minute: "42m", 94 * time.Minute: "1h34m", 3 * time.Hour: "3h", 26*time.Hour + 50*time.Minute: "27h",
		30 * 24 * time.Hour: "30d", 76 * time.Hour: "3d4h",
	} {
		if got := HumanDuration(d); got != want {
			t.Errorf("HumanDuration(%s) = %s, want %s", d, got, want)
		}
	}
}
