package config

import (
	"strings"
	"testing"
	"time"
)

func TestParseSchedule(t *testing.T) {
	// The v3.0.1 parser itself panics on a bare time-zone prefix
	// (robfig/cron #554); ParseSchedule must not.
	func() {
		defer func() { _ = recover() }()
		_, _ = cronParser.Parse("CRON_TZ=")
	}()
	for _, spec := range []string{"@hourly", "@every 30m", "17 * * * *", "0 9 * * 1-5"} {
		if _, err := ParseSchedule(spec); err != nil {
			t.Errorf("%q: %v", spec, err)
		}
	}
	for spec, want := range map[string]string{
		"CRON_TZ=":                   "remove the CRON_TZ= prefix",
		"TZ=":                        "remove the TZ= prefix",
		"CRON_TZ=Asia/Tokyo 0 * * *": "set daemon.timeZone instead",
		"":                           "is empty",
		"0 * * *":                    "expected exactly 5 fields",
		"@fortnightly":               "is not a cron schedule",
		"61 * * * *":                 "is not a cron schedule",
	} {
		_, err := ParseSchedule(spec)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want it to say %q", spec, err, want)
		}
	}
}

func TestDaemonDefaults(t *testing.T) {
	c, err := Parse([]byte("clusters: [{name: a}]\ndaemon:\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := Daemon{Schedule: "@hourly", TimeZone: "UTC", RunOnStart: true, Listen: ":8080", ShutdownTimeout: Duration(25 * time.Second),
		LeaderElection: LeaderElection{Name: "reclaim", LeaseDuration: Duration(15 * time.Second), RenewDeadline: Duration(10 * time.Second), RetryPeriod: Duration(2 * time.Second)}}
	if c.Daemon == nil || *c.Daemon != want || DefaultDaemon() != want {
		t.Errorf("daemon defaults:\ngot  %+v\nwant %+v\nDefaultDaemon %+v", c.Daemon, want, DefaultDaemon())
	}
	// runOnStart: false is kept.
	c, err = Parse([]byte("clusters: [{name: a}]\ndaemon: {runOnStart: false, timeZone: Asia/Tokyo}\n"), "t.yaml")
	if err != nil || c.Daemon.RunOnStart || c.Daemon.TimeZone != "Asia/Tokyo" {
		t.Errorf("explicit values: %+v %v", c.Daemon, err)
	}
}
