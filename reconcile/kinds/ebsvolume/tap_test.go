package ebsvolume

import (
	"bytes"
	"reflect"
	"testing"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/published"
)

// What the taps read travels in an agent's record and reads back as the
// type the kind looks for: a deleter reading records sees every volume a
// PV or pod names.
func TestTapsTravelInARecord(t *testing.T) {
	read := refs{"vol-0123456789abcdef0": {{PV: "pv-1", ClaimNamespace: "a", Claim: "data"}, {Pod: "a/p"}}}
	rec := published.Record{Cluster: published.Identity{Name: "c", KubeSystemUID: "u"}, Refs: inventory.ClusterRefs{Name: "c", Complete: true,
		Taps: map[string]inventory.Tapped{TapPVs: {Complete: true, Items: 1, Data: read}, TapPods: {Complete: true, Items: 1, Data: refs{}}}}}
	var b bytes.Buffer
	if err := published.Encode(&b, rec); err != nil {
		t.Fatal(err)
	}
	dec := map[string]published.Decoder{}
	for _, tap := range Taps(nil) {
		dec[tap.Name] = tap.Decode
	}
	out, err := published.Decode(&b, dec)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := out.Refs.Taps[TapPVs].Data.(refs); !ok || !reflect.DeepEqual(got, read) {
		t.Fatalf("read back %#v", out.Refs.Taps[TapPVs].Data)
	}
	if _, ok := out.Refs.Taps[TapPods].Data.(refs); !ok || !out.Refs.Taps[TapPods].Complete {
		t.Fatalf("pods tap %#v", out.Refs.Taps[TapPods])
	}
}
