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
	// Label marks a bucket as temporary (value "true").
	Label string `json:"label"`
	// Safety is the block every kind shares, written in the section, with
	// the floors every kind has (SectionSpec.Safety): protectTag, a bucket
	// label that (any value: the engine's opt-out rule) keeps one whatever
	// else holds; minAge, how old a temporary bucket gets before it may go
	// (the engine's minimum age); grace and the per-run caps.
	config.Safety
}

func init() {
	config.Register(config.SectionSpec[Section]{
		Key:    Key,
		Doc:    "deletes buckets labelled temporary once older than minAge",
		Safety: func(s *Section) *config.Safety { return &s.Safety },
		SafetyRules: config.SafetyRules{
			Defaults: config.Safety{ProtectTag: "reclaim.dev/protect", MinAge: config.Duration(24 * time.Hour), Grace: config.Duration(time.Hour),
				Caps: config.Caps{MaxDeletesPerRun: 10, MaxDeletePercent: config.Percent(0.5), BreakerCandidates: 100}},
			Without:   []string{config.KeyMaxDeleteSizePerRun},
			GraceWhy:  "a bucket must be a candidate on more than one run before it is deleted",
			MinAgeWhy: "a bucket being filled would otherwise go while in use",
		},
		Defaults: func(s *Section, set func(string) bool) {
			config.Fill(set, "label", &s.Label, "reclaim.dev/temporary")
		},
		Validate: func(s *Section, report *config.Report) {
			if len(s.Accounts) == 0 {
				report.Add("accounts", "is empty — list the accounts whose buckets to look at")
			}
			if s.Label == "" {
				report.Add("label", "is empty — name the label that marks a bucket temporary")
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

// New makes the kind from its section and the client its cloud was opened
// with (nil before one is): Module.New, through kind.WithSection.
func New(s Section, api API) *Kind { return &Kind{s: s, api: api} }

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
	l.BatchSize, l.OptOutKey = 10, k.s.ProtectTag
	l.Wording = engine.Wording{Section: Key, Noun: "buckets"}
	return l
}

// OptOut says how a person keeps one of the kind's resources from being
// deleted (report.OptOuter).
func (k *Kind) OptOut() string { return optout.Rule("label", k.s.ProtectTag, "bucket") }

func id(account, name string) string { return Name + "/" + account + "/" + name }

// parseID is id's inverse, for the ids the state keeps: ok is false for
// one the kind did not make.
func parseID(s string) (account, name string, ok bool) {
	rest, ok := strings.CutPrefix(s, Name+"/")
	if !ok {
		return "", "", false
	}
	account, name, ok = strings.Cut(rest, "/")
	return account, name, ok && account != "" && name != ""
}

// Propose proposes every temporary bucket the read listed: protected when
// it carries the protect label, else a candidate, with its creation time
// for the engine's minimum age; the engine alone decides the action.
// Each account's listing is a source; a proposal names its account's, so
// the engine holds it when that listing is incomplete.
func (k *Kind) Propose(snap *inventory.View, _ time.Time) engine.Proposals {
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
			v, protected := optout.Protects(k.s.ProtectTag, b.Labels)
			switch {
			case protected:
				p.Protected = optout.Reason("label", k.s.ProtectTag, v)
			default: // the engine keeps it until minAge (Created)
				p.Candidate, p.Class, p.Reason = true, "temporary", "labelled temporary"
			}
			out.Items = append(out.Items, p)
		}
	}
	out.InScope = len(out.Items)
	out.Presence = engine.Listed(func(id string) (string, bool) {
		account, _, ok := parseID(id)
		return account, ok
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
