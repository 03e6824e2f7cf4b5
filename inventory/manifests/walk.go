package manifests

import (
	"fmt"
	"strings"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/imageref"
)

// walkDoc records the references of one decoded document.
func walkDoc(set *imageref.Set, where string, doc any) {
	seen := map[string]bool{} // strings already recorded as images
	imageref.WalkImages(doc, func(image, _ string) {
		seen[image] = true
		set.Image(image, where)
	})
	walkImagesLists(set, where, doc, seen)
	walkStrings(set, where, doc, nil, seen)
}

// walkImagesLists records the effective image of every entry of an images
// list at any depth: kustomize and Flux ({name, newName, newTag, digest}) and
// Argo CD ("[old=]new:tag").
func walkImagesLists(set *imageref.Set, where string, v any, seen map[string]bool) {
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			walkImagesLists(set, where, e, seen)
		}
	case map[string]any:
		for k, e := range v {
			if l, ok := e.([]any); ok && k == "images" {
				for _, entry := range l {
					imagesEntry(set, where, entry, seen)
				}
			}
			walkImagesLists(set, where, e, seen)
		}
	}
}

func imagesEntry(set *imageref.Set, where string, entry any, seen map[string]bool) {
	switch e := entry.(type) {
	case string:
		seen[e] = true
		img := e
		if _, after, ok := strings.Cut(e, "="); ok {
			img = after
		}
		if imageref.LooksECR(img) {
			set.Image(img, where)
		}
	case map[string]any:
		name, _ := e["name"].(string)
		newName, _ := e["newName"].(string)
		seen[name], seen[newName] = true, true
		eff := name
		if newName != "" {
			eff = newName
		}
		if !imageref.LooksECR(eff) {
			return
		}
		tag, isString := e["newTag"].(string)
		if raw, present := e["newTag"]; present && raw != nil && !isString {
			// A number (newTag: 1.20) decodes lossily: the real tag is unknown.
			repoOnly(set, where, eff, fmt.Sprintf("kustomize image %q has a newTag that is not a string (%v): quote it", eff, raw))
			return
		}
		digest, _ := e["digest"].(string)
		ref := eff
		if tag != "" {
			ref += ":" + tag
		}
		if digest != "" {
			ref += "@" + digest
		}
		if tag == "" && digest == "" {
			// Only a new name: the tag comes from the resources.
			repoOnly(set, where, eff, fmt.Sprintf("kustomize image %q sets neither newTag nor digest, so its tag comes from the resources", eff))
			return
		}
		set.Image(ref, where)
	}
}

// walkStrings records every other string that names an ECR repository.
func walkStrings(set *imageref.Set, where string, v any, parent map[string]any, seen map[string]bool) {
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			walkStrings(set, where, e, nil, seen)
		}
	case map[string]any:
		// Helm values: registry: HOST, repository: NAME, tag: TAG.
		if reg, ok := v["registry"].(string); ok && imageref.LooksECR(reg) {
			if repo, ok := v["repository"].(string); ok && repo != "" && !imageref.LooksECR(repo) {
				seen[reg] = true
				stray(set, where, strings.TrimSuffix(reg, "/")+"/"+strings.TrimPrefix(repo, "/"), v)
			}
		}
		for _, e := range v {
			walkStrings(set, where, e, v, seen)
		}
	case string:
		if !seen[v] && imageref.LooksECR(v) {
			stray(set, where, v, parent)
		}
	}
}

// stray records a string outside a container image that names an ECR
// repository. One that names only a registry (a host, a template for the
// whole path) is not an image and is ignored.
func stray(set *imageref.Set, where, s string, parent map[string]any) {
	ref, ok, err := imageref.Parse(s)
	if err != nil {
		if u, isECR := imageref.Loose(s); isECR && u.Ref.Repo.Name != "" {
			set.Put(u.Ref, where, u.Problem)
		}
		return
	}
	if !ok {
		return
	}
	if explicit(s) {
		set.Put(ref, where, "")
		return
	}
	// A repository without tag: Helm values put the tag beside it.
	tag, _ := parent["tag"].(string)
	digest, _ := parent["digest"].(string)
	if tag != "" || digest != "" {
		full := strings.TrimSpace(s)
		if tag != "" {
			full += ":" + tag
		}
		if digest != "" {
			full += "@" + digest
		}
		set.Image(full, where)
		return
	}
	repoOnly(set, where, s, fmt.Sprintf("%q names an ECR repository without a tag or digest", s))
}

// repoOnly records a use that pins every image of the repository s names.
func repoOnly(set *imageref.Set, where, s, why string) {
	ref, ok, err := imageref.Parse(s)
	if err != nil {
		if u, isECR := imageref.Loose(s); isECR {
			set.Put(u.Ref, where, u.Problem)
		}
		return
	}
	if !ok {
		return
	}
	set.Put(inventory.ImageRef{Repo: ref.Repo}, where, why+"; reclaim keeps every image of "+ref.Repo.String())
}

// explicit reports whether a reference names its tag or digest (rather than
// defaulting to latest).
func explicit(s string) bool {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "@") {
		return true
	}
	last := s[strings.LastIndex(s, "/")+1:]
	return strings.Contains(last, ":")
}
