package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"reclaim.dev/reclaim/notify"
	"reclaim.dev/reclaim/notify/report"
)

// Target is a Slack incoming webhook as a notify target.
type Target struct {
	TargetName string
	Policy     notify.When
	Client     *Client
	Options    Options
	// Spool is the directory (notify.spool) where a report that could not
	// be posted waits, as its messages in JSON, for the next run; "" keeps
	// nothing.
	Spool string
	Now   func() time.Time
}

var _ notify.Target = (*Target)(nil)

// Name is the configured name.
func (t *Target) Name() string { return t.TargetName }

// Type is "slack".
func (t *Target) Type() string { return "slack" }

// When is the target's policy.
func (t *Target) When() notify.When { return t.Policy }

// Deliver posts what the spool holds, oldest first, then the report's
// messages. A report that cannot be posted is spooled for the next run: a
// failed delivery never loses one.
func (t *Target) Deliver(ctx context.Context, rep *report.Report) error {
	msgs := Build(rep, t.Options)
	sp := t.spooler()
	n, err := sp.Flush(func(raw []byte) error {
		var spooled []Message
		if err := json.Unmarshal(raw, &spooled); err != nil {
			return fmt.Errorf("a spooled report is not valid JSON (%v): remove it from %s", err, sp.Dir)
		}
		return t.Client.Send(ctx, spooled)
	})
	if err == nil {
		err = t.Client.Send(ctx, msgs)
	} else {
		err = fmt.Errorf("%d spooled reports still unposted: %w", n, err)
	}
	if err == nil {
		return nil
	}
	raw, merr := json.Marshal(msgs)
	if merr != nil {
		return fmt.Errorf("%w; and the report could not be spooled: %v", err, merr)
	}
	path, serr := sp.Put(raw)
	if serr != nil {
		return fmt.Errorf("%w; and the report could not be spooled: %v", err, serr)
	}
	return fmt.Errorf("%w; the report was spooled to %s and is posted by the next run", err, path)
}

// Spooled lists the target's spooled reports, oldest first.
func (t *Target) Spooled() ([]string, error) { return t.spooler().Files() }

func (t *Target) spooler() notify.Spool {
	sp := notify.Spool{Ext: ".json", Now: t.Now}
	if t.Spool != "" {
		sp.Dir = filepath.Join(t.Spool, t.TargetName)
	}
	return sp
}

// Test posts a short test message.
func (t *Target) Test(ctx context.Context) error {
	return t.Client.Post(ctx, TestMessage(t.Options.Fleet, t.TargetName))
}
