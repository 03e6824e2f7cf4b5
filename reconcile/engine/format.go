package engine

import (
	"fmt"
	"time"
)

// HumanBytes prints a size the way registries do: 1.2 GB, 340 MB.
func HumanBytes(n int64) string {
	switch {
	case n == 0:
		return "-"
	case n >= 1e12:
		return fmt.Sprintf("%.1f TB", float64(n)/1e12)
	case n >= 1e9:
		return fmt.Sprintf("%.1f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.0f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.0f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}

// HumanDuration writes d as people say it: "42m", "1h34m", "27h", "3d4h".
func HumanDuration(d time.Duration) string {
	d = d.Round(time.Minute)
	switch {
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 10*time.Hour && d%time.Hour != 0:
		return fmt.Sprintf("%dh%dm", int(d.Hours()), int(d.Minutes())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Round(time.Hour).Hours()))
	}
	d = d.Round(time.Hour)
	days, hours := int(d.Hours())/24, int(d.Hours())%24
	if hours == 0 {
		return fmt.Sprintf("%dd", days)
	}
	return fmt.Sprintf("%dd%dh", days, hours)
}
