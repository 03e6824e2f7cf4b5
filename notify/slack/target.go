package slack

import (
	"context"

	"reclaim.dev/reclaim/notify"
	"reclaim.dev/reclaim/report"
)

// Target is a Slack incoming webhook as a notify target.
type Target struct {
	TargetName string
	Policy     notify.When
	Client     *Client
	Options    Options
}

var _ notify.Target = (*Target)(nil)

// Name is the configured name.
func (t *Target) Name() string { return t.TargetName }

// Type is "slack".
func (t *Target) Type() string { return "slack" }

// When is the target's policy.
func (t *Target) When() notify.When { return t.Policy }

// Deliver posts the report's messages.
func (t *Target) Deliver(ctx context.Context, rep *report.Report) error {
	return t.Client.Send(ctx, Build(rep, t.Options))
}

// Test posts a short test message.
func (t *Target) Test(ctx context.Context) error {
	return t.Client.Post(ctx, TestMessage(t.Options.Fleet, t.TargetName))
}
