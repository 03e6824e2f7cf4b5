package csisnapshot

import (
	"fmt"
	"strings"

	"reclaim.dev/reclaim/inventory"
)

// Ref is a content naming a snapshot, in its cluster.
type Ref struct {
	Cluster string
	Content
}

// Index is what every read cluster's contents name, built once per plan.
type Index struct {
	handles map[string][]Ref
	// making are the contents whose handle is not written yet, by their
	// VolumeSnapshot's uid.
	making map[string][]Ref
	passes map[string]inventory.Tapped
}

// IndexOf indexes the view's clusters' contents, complete passes or not
// (what an incomplete one shows is in use all the same; Lookup says it
// holds the rest).
func IndexOf(v *inventory.View) *Index {
	ix := &Index{handles: map[string][]Ref{}, making: map[string][]Ref{}, passes: map[string]inventory.Tapped{}}
	for i := range v.Clusters {
		c := &v.Clusters[i]
		t, ok := c.Taps[Tap]
		if !ok {
			continue
		}
		ix.passes[c.Name] = t
		cs, _ := t.Data.(Contents)
		for _, ct := range cs {
			r := Ref{Cluster: c.Name, Content: ct}
			switch {
			case ct.Handle != "":
				ix.handles[ct.Handle] = append(ix.handles[ct.Handle], r)
			case ct.SnapshotUID != "":
				ix.making[ct.SnapshotUID] = append(ix.making[ct.SnapshotUID], r)
			}
		}
	}
	return ix
}

// Answer is what the clusters say of one cloud snapshot.
type Answer struct {
	// InUse are the contents that name it, in any read cluster.
	InUse []Ref
	// Held say, of the clusters that could own it, each that was not read
	// or whose pass of the contents is incomplete.
	Held []string
}

// Lookup says what the clusters show of the snapshot handle: the contents
// naming it (by handle, or, while a content's handle is not written yet,
// by the name the driver made it under, csiName, which ends with its
// VolumeSnapshot's uid), and which of owners (the clusters that could own
// it) hold it, unread or read incompletely.
func (ix *Index) Lookup(handle, csiName string, owners []string) Answer {
	var a Answer
	a.InUse = append(a.InUse, ix.handles[handle]...)
	for i := range len(csiName) { // "PREFIX-UID": the prefix is the sidecar's flag
		if csiName[i] == '-' {
			a.InUse = append(a.InUse, ix.making[csiName[i+1:]]...)
		}
	}
	for _, c := range owners {
		t, read := ix.passes[c]
		switch {
		case !read:
			a.Held = append(a.Held, "cluster "+c+" could own it and its VolumeSnapshotContents were not read")
		case !t.Complete:
			a.Held = append(a.Held, fmt.Sprintf("cluster %s could own it and its VolumeSnapshotContents were read incompletely (%s)", c, t.Problem))
		}
	}
	return a
}

// Say is the answer in a sentence: in use by a content, held by an
// unread cluster, or named by none.
func (a Answer) Say() string {
	switch {
	case len(a.InUse) > 0:
		r := a.InUse[0]
		s := fmt.Sprintf("in use by cluster %s (VolumeSnapshotContent %s", r.Cluster, r.Name)
		if r.VolumeSnapshot != "" {
			s += " of VolumeSnapshot " + r.VolumeSnapshot
		}
		if r.Handle == "" {
			s += ", being made"
		}
		if r.DeletionPolicy != "" {
			s += ", deletionPolicy " + r.DeletionPolicy
		}
		s += ")"
		if len(a.InUse) > 1 {
			s += fmt.Sprintf("; %d more contents name it", len(a.InUse)-1)
		}
		return s
	case len(a.Held) > 0:
		return "held: " + strings.Join(a.Held, "; ")
	}
	return "no VolumeSnapshotContent names it"
}
