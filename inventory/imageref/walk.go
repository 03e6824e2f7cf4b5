package imageref

// Container list keys whose items carry an image: Kubernetes pod specs at any
// depth (workload templates, CronJob job templates, Knative, Argo Workflow
// templates' initContainers) and Argo's sidecars.
var containerLists = map[string]bool{
	"containers":          true,
	"initContainers":      true,
	"ephemeralContainers": true,
	"sidecars":            true,
}

// Single-container keys: Argo Workflow templates' container and script.
var containerMaps = map[string]bool{
	"container": true,
	"script":    true,
}

// WalkImages calls fn for every image a decoded JSON or YAML document (maps,
// slices and scalars, as encoding/json or sigs.k8s.io/yaml produce) asks a
// kubelet to pull, at any depth: the image of every item of a containers,
// initContainers, ephemeralContainers or sidecars list, of an Argo container
// or script, and the reference of every image volume (volumes[].image.reference).
// what names the user: the container's name, or "volume NAME".
func WalkImages(doc any, fn func(image, what string)) {
	switch v := doc.(type) {
	case []any:
		for _, e := range v {
			WalkImages(e, fn)
		}
	case map[string]any:
		for k, e := range v {
			switch {
			case containerLists[k]:
				if l, ok := e.([]any); ok {
					for _, c := range l {
						containerImage(c, "", fn)
					}
				}
			case containerMaps[k]:
				containerImage(e, k, fn)
			case k == "volumes":
				if l, ok := e.([]any); ok {
					for _, vol := range l {
						m, _ := vol.(map[string]any)
						img, _ := m["image"].(map[string]any)
						if ref, ok := img["reference"].(string); ok && ref != "" {
							name, _ := m["name"].(string)
							fn(ref, "volume "+name)
						}
					}
				}
			}
			WalkImages(e, fn)
		}
	}
}

func containerImage(c any, what string, fn func(image, what string)) {
	m, ok := c.(map[string]any)
	if !ok {
		return
	}
	img, ok := m["image"].(string)
	if !ok || img == "" {
		return
	}
	if name, ok := m["name"].(string); ok && name != "" {
		what = name
	}
	fn(img, what)
}
