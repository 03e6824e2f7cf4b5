// Package examplecloud is a whole cloud kind in one package, as "Adding a
// kind" in docs/architecture.md describes: it deletes object-storage buckets labelled
// temporary once they are older than a maximum age. It is not part of
// reclaim (no binary links it); internal/app's TestACloudKindIsOnePackage
// registers it the way a real kind is registered, over an in-memory cloud,
// so the steps the doc gives for a cloud kind stay true.
//
// What the package holds, and nothing outside it does: its config section,
// the API it reads and deletes through (a provider's client implements it),
// its read of that cloud (run by the collector with the other clouds into
// View.Clouds), its proposals with the listings' completeness as
// sources (the engine decides on them, enforcing every safety rule), and
// its re-read and delete.
package examplecloud

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/base/optout"
	"reclaim.dev/reclaim/base/outcome"
	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/kind"
)

// Name is the kind; Key its config section; SourceKind names its listings
// among the plan's sources.
const (
	Name       = "example-bucket"
	Key        = "exampleBuckets"
	SourceKind = "example-cloud"
)

// Section is the kind's config section.
type Section struct {
	// Accounts are the cloud accounts whose buckets it looks at.
	Accounts []string `json:"accounts"`
	// Label marks a bucket as temporary (value "true"); ProtectLabel (any
	// value: the engine's opt-out rule) keeps one whatever else holds.
	Label        string          `json:"label"`
	ProtectLabel string          `json:"protectLabel"`
	MaxAge       config.Duration `json:"maxAge"`
	// Safety is grace and the per-run caps, written in the section, with
	// the floors every kind has (SectionSpec.Safety); maxAge stands for a
	// minimum age, and protectLabel for a protect tag.
	config.Safety
}

func init() {
	config.Register(config.SectionSpec[Section]{
		Key:    Key,
		Doc:    "deletes buckets labelled temporary once older than maxAge",
		Safety: func(s *Section) *config.Safety { return &s.Safety },
		SafetyRules: config.SafetyRules{
			Defaults: config.Safety{Grace: config.Duration(time.Hour),
				Caps: config.Caps{MaxDeletesPerRun: 10, MaxDeletePercent: config.Percent(0.5), BreakerCandidates: 100}},
			Without:  []string{config.KeyProtectTag, config.KeyMinAge, config.KeyMaxDeleteSizePerRun},
			GraceWhy: "a bucket must be a candidate on more than one run before it is deleted",
		},
		Defaults: func(s *Section, set func(string) bool) {
			config.Fill(set, "label", &s.Label, "reclaim.dev/temporary")
			config.Fill(set, "protectLabel", &s.ProtectLabel, "reclaim.dev/protect")
			config.Fill(set, "maxAge", &s.MaxAge, config.Duration(24*time.Hour))
		},
		Validate: func(s *Section, report *config.Report) {
			if len(s.Accounts) == 0 {
				report.Add("accounts", "is empty — list the accounts whose buckets to look at")
			}
			if s.Label == "" {
				report.Add("label", "is empty — name the label that marks a bucket temporary")
			}
			if s.MaxAge.Std() < time.Minute {
				report.Add("maxAge", "%s is too short — use at least 1m", s.MaxAge)
			}
		},
	})
}

// SectionOf is the file's section, nil when it has none (the kind is off).
func SectionOf(cfg *config.Config) *Section { return config.SectionOf[Section](cfg, Key) }

// Bucket is one bucket as the cloud lists it.
type Bucket struct {
	Name, ID string // ID changes when a bucket is recreated under its name
	Created  time.Time
	Labels   map[string]string
}

// ErrChanged is what DeleteBucket returns when the bucket is no longer the
// one named by id (its precondition failed): a delete outcome the engine
// reads as a skip (outcome.Of).
var ErrChanged = outcome.MarkChanged(errors.New("bucket changed"))

// API is the cloud the kind reads and deletes through; a provider's client
// implements it (with its paging, retries and rate limits).
type API interface {
	// Buckets lists an account's buckets, every page; with an error, what
	// the pages before it showed.
	Buckets(ctx context.Context, account string) ([]Bucket, error)
	// Bucket re-reads one; an error wrapping outcome.ErrNotFound when gone.
	Bucket(ctx context.Context, account, name string) (Bucket, error)
	// DeleteBucket deletes the bucket only while its id is id. Its error
	// says the outcome (outcome.Of): ErrChanged for another id,
	// outcome.ErrNotFound when gone, outcome.Refused for the cloud's
	// no; any other error is no answer.
	DeleteBucket(ctx context.Context, account, name, id string) error
}

// Listing is one account's buckets; incomplete when the list failed.
type Listing struct {
	Account  string
	Complete bool
	Problem  string
	Buckets  []Bucket
}

// Reader is the kind's read of its cloud through client (the collector's
// CloudRead, kind.Cloud.Read): every account, never failing as a whole.
func Reader(cfg *config.Config, client any) func(ctx context.Context) any {
	api, accounts := client.(API), SectionOf(cfg).Accounts
	return func(ctx context.Context) any {
		out := make([]Listing, len(accounts))
		for i, a := range accounts {
			bs, err := api.Buckets(ctx, a)
			out[i] = Listing{Account: a, Complete: err == nil, Buckets: bs}
			if err != nil {
				out[i].Problem = fmt.Sprintf("list buckets of %s: %v", a, err)
			}
		}
		return out
	}
}

// Kind plans and deletes temporary buckets.
type Kind struct {
	s   Section
	api API
}

// FromConfig makes the kind with the client its cloud was opened with (an
// API; nil before one is); nil when the section is absent.
func FromConfig(cfg *config.Config, client any) *Kind {
	s := SectionOf(cfg)
	if s == nil {
		return nil
	}
	api, _ := client.(API)
	return &Kind{s: *s, api: api}
}

// Detail is what a bucket decision says beyond the envelope.
type Detail struct {
	Account  string `json:"account"`
	BucketID string `json:"bucketId"`
}

func (k *Kind) Name() string { return Name }

func (k *Kind) Owns(id string) bool { return strings.HasPrefix(id, Name+"/") }

func (k *Kind) Limits() engine.Limits {
	// The safety block's limits; a kind whose deletions free a size passes
	// its unit (ebsvolume.GiB), in which maxDeleteSizePerRun then counts.
	// A bucket frees none: nil.
	l := kind.Limits(k.s.Safety, nil)
	l.BatchSize, l.OptOutKey = 10, k.s.ProtectLabel
	l.Wording = engine.Wording{Section: Key, Noun: "buckets"}
	return l
}

// OptOut says how a person keeps one of the kind's resources from being
// deleted (report.OptOuter).
func (k *Kind) OptOut() string { return optout.Rule("label", k.s.ProtectLabel, "bucket") }

func id(account, name string) string { return Name + "/" + account + "/" + name }

// Propose proposes every temporary bucket the read listed: a candidate once
// older than maxAge, protected when it carries the protect label, else not
// a candidate (the engine keeps it); the engine alone decides the action.
// Each account's listing is a source; a proposal names its account's, so
// the engine holds it when that listing is incomplete.
func (k *Kind) Propose(snap *inventory.View, now time.Time) engine.Proposals {
	var out engine.Proposals
	ls := inventory.CloudOf[[]Listing](snap, Name)
	listed := map[string]bool{}
	complete := map[string]bool{}
	for _, l := range ls {
		src := engine.Source{Kind: SourceKind, Name: l.Account, Complete: l.Complete, Items: len(l.Buckets), Unit: "buckets"}
		if !l.Complete {
			src.Problems = []string{l.Problem}
		}
		out.Sources = append(out.Sources, src)
		complete[l.Account] = l.Complete
		for _, b := range l.Buckets {
			if b.Labels[k.s.Label] != "true" {
				continue
			}
			p := engine.Proposal{ID: id(l.Account, b.Name), Name: b.Name, Identity: b.ID, Detail: &Detail{Account: l.Account, BucketID: b.ID},
				Created: b.Created, Sources: []string{src.Key()}}
			listed[p.ID] = true
			v, protected := optout.Protects(k.s.ProtectLabel, b.Labels)
			switch {
			case protected:
				p.Protected = optout.Reason("label", k.s.ProtectLabel, v)
			case now.Sub(b.Created) >= k.s.MaxAge.Std():
				p.Candidate, p.Class, p.Reason = true, "expired", fmt.Sprintf("temporary and older than %s", k.s.MaxAge)
			default:
				p.Class, p.Reason = "young", fmt.Sprintf("temporary, younger than %s", k.s.MaxAge)
			}
			out.Items = append(out.Items, p)
		}
	}
	out.InScope = len(out.Items)
	out.Presence = engine.Listed(func(id string) (string, bool) {
		scope, _, ok := strings.Cut(strings.TrimPrefix(id, Name+"/"), "/")
		return scope, ok
	}, complete, listed)
	return out
}

// View lists the decisions: it makes the kind a report.Viewer, which
// reports read (report.Show).
func (k *Kind) View(p *engine.Plan, _ *inventory.View) layout.View {
	b := layout.Block{Indent: 2}
	for d := range p.All() {
		if d.Kind == Name {
			b.Add(d, d.ID, d.Why())
		}
	}
	if len(b.Rows) == 0 {
		return layout.View{}
	}
	return layout.View{Sections: []layout.Section{{Title: "TEMPORARY BUCKETS", Place: layout.Details, Blocks: []layout.Block{b}}}}
}

func detailOf(d *engine.Decision) *Detail {
	det, _ := d.Detail.(*Detail)
	if det == nil {
		return &Detail{}
	}
	return det
}

// Recheck re-reads each bucket: gone, recreated (another id) or no longer
// temporary since the plan is a skip. It shows the engine the labels it
// saw, and the engine checks the opt-out in them.
func (k *Kind) Recheck(ctx context.Context, batch []*engine.Decision) ([]engine.Verdict, error) {
	return engine.RecheckEach(batch, func(_ int, d *engine.Decision) (Bucket, error) {
		det := detailOf(d)
		b, err := k.api.Bucket(ctx, det.Account, d.Name)
		if err != nil {
			return b, fmt.Errorf("re-read bucket %s/%s: %w", det.Account, d.Name, err)
		}
		return b, nil
	}, func(d *engine.Decision, b Bucket) engine.Verdict {
		switch {
		case b.ID != detailOf(d).BucketID:
			return engine.Changed("recreated")
		case b.Labels[k.s.Label] != "true":
			return engine.Changed("no longer temporary")
		}
		return engine.Pass(b.Labels) // the engine checks the opt-out label
	})
}

// Delete deletes each bucket with its id as a precondition. The provider's
// error says each outcome; the engine decides what it means, and the first
// unknown one fails the call (the next run settles it from its listing).
func (k *Kind) Delete(ctx context.Context, batch []*engine.Decision) ([]engine.Deleted, error) {
	return engine.DeleteEach(batch, func(_ int, d *engine.Decision) engine.Deleted {
		det := detailOf(d)
		return engine.Deleted{Err: k.api.DeleteBucket(ctx, det.Account, d.Name, det.BucketID)}
	})
}
