package awsclient

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

type client struct{ account, region string }

func (c *client) Account() string { return c.account }
func (c *client) Region() string  { return c.region }

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
	_, err := NewFleet("x", opts, func(o client) (string, string) { return o.account, o.region }, build)
	if err == nil || !strings.Contains(err.Error(), "x 2: 1/a is configured twice") || !strings.Contains(err.Error(), "x 3: boom") {
		t.Fatalf("err = %v", err)
	}
	if built != 3 {
		t.Errorf("built %d clients, want 3 (not the duplicate)", built)
	}

	f, err := NewFleet("x", opts[:2], func(o client) (string, string) { return o.account, o.region }, build)
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := f.Get("2", "a"); !ok || c.account != "2" {
		t.Errorf("Get(2, a) = %v, %v", c, ok)
	}
	if f.Add(&client{"1", "a"}) {
		t.Error("Add took a duplicate")
	}
	got := Map(&f, func(c *client) string { return c.account })
	if !slices.Equal(got, []string{"1", "2"}) {
		t.Errorf("Map = %v", got)
	}
}
