package awsclient

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

type client struct{ account, region string }

func (c *client) Account() string        { return c.account }
func (c *client) Region() string         { return c.region }
func (c client) Scope() (string, string) { return c.account, c.region }

func TestNewFleet(t *testing.T) {
	opts := []client{{"1", "a"}, {"2", "a"}, {"1", "a"}, {"bad", "b"}}
	built := 0
	build := func(o client) (*client, error) {
		built++
		if o.account == "bad" {
			return nil, errors.New("boom")
		}
		return &o, nil
	}
	_, err := NewFleet("x", opts, build)
	if err == nil || !strings.Contains(err.Error(), "x 2: 1/a is configured twice") || !strings.Contains(err.Error(), "x 3: boom") {
		t.Fatalf("err = %v", err)
	}
	if built != 3 {
		t.Errorf("built %d clients, want 3 (not the duplicate)", built)
	}

	f, err := NewFleet("x", opts[:2], build)
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := f.Client("2", "a"); !ok || c.account != "2" {
		t.Errorf("Client(2, a) = %v, %v", c, ok)
	}
	if f.Add(&client{"1", "a"}) {
		t.Error("Add took a duplicate")
	}
	if _, err := f.Lookup("3", "a"); err == nil || err.Error() != "x: account 3 region a is not configured" {
		t.Errorf("Lookup(3, a) = %v", err)
	}
	if _, err := FleetOf("x", &client{"1", "a"}, &client{"1", "a"}); err == nil || err.Error() != "x: 1/a given twice" {
		t.Errorf("FleetOf with a duplicate = %v", err)
	}
	got := Map(&f, func(c *client) string { return c.account })
	if !slices.Equal(got, []string{"1", "2"}) {
		t.Errorf("Map = %v", got)
	}
}
