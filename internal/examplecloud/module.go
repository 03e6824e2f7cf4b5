package examplecloud

import (
	"context"
	"errors"

	"go.uber.org/zap"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/reconcile/kinds/kind"
)

// Module is the kind for the wiring: the one value a kind exports, and the
// one line internal/app's Registered gains (here, TestACloudKindIsOnePackage
// registers it). On with its section, it reads its own cloud (Open,
// Reader), named after the kind: its client is Clients.Clouds[Name].
var Module = kind.Module{
	Name:    Name,
	Section: Key,
	New:     kind.WithSection(Name, Key, New),
	Cloud:   &kind.Cloud{Open: Open, Read: Reader},
}

// Open makes the kind's client from its section. A real kind's builds its
// provider's client here; the example has no provider, so a run must be
// given its client (app.Deps.Clients[Name], as the test's in-memory cloud
// is), and without one it is refused rather than read as an empty cloud.
func Open(_ context.Context, cfg *config.Config, _ *zap.Logger, _ string) (any, func(), error) {
	if SectionOf(cfg) == nil {
		return nil, nil, nil
	}
	return nil, nil, errors.New("examplecloud has no provider: give its client in app.Deps.Clients")
}
