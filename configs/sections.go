package config

import (
	"fmt"
	"reflect"
	"slices"
	"sync"
)

// A kind owns its section of the file: its type, defaults, validation and
// documentation live in the kind's package, which registers them here (from
// an init func). The section is decoded as strictly as the rest of the file,
// and its problems carry their full path ("configMaps.maxAge"), so adding a
// kind edits nothing in this package.

// SectionSpec describes one kind's top-level section. T is a struct whose
// fields decode like Config's (json tags, Duration, Percent, Size, Secret).
type SectionSpec[T any] struct {
	// Key is the section's top-level key ("configMaps").
	Key string
	// Doc says in a sentence what the section turns on, for people.
	Doc string
	// Reference is the section as configs/reference.yaml shows the others:
	// YAML with a comment above each key saying what it does and its
	// default. A kind's package embeds its own file, so adding a kind edits
	// nothing here; docs/configuration.md is rendered from both.
	Reference string
	// Always: a file without the section gets one with its defaults (a
	// policy every run has), instead of none (a kind the file turns on).
	Always bool
	// Defaults fills in what the file left out; set says whether the file
	// set a key, by its path inside the section ("caps.maxDeletesPerRun").
	// Fill is the usual way to write it. Nil: no defaults.
	Defaults func(s *T, set func(path string) bool)
	// Normalize, if set, rewrites values before Validate (expands ~ in
	// paths), reporting what it cannot.
	Normalize func(s *T, report *Report)
	// Validate reports every problem, each with a path inside the section
	// ("" for the section itself). Nil: anything that decodes is valid.
	Validate func(s *T, report *Report)
	// Check, if set, checks the section against the rest of the file (a
	// key another section must agree with), after every Validate.
	Check func(s *T, c *Config, report *Report)
	// GKE, if set, is the Google Cloud identity and projects the section
	// reaches: fleet discovery searches them when fleet.gke is not set.
	GKE func(s *T) GKEDiscovery
	// AWS, if set, lists the AWS accounts and regions the section reaches
	// and how: fleet discovery searches them when fleet.eks is not set.
	AWS func(s *T) []EKSDiscovery
	// Safety, if set, is the section's Safety (embedded without a name in
	// the section, or in its part at SafetyRules.At) and SafetyRules how
	// the kind has it: the registry fills its defaults before Defaults
	// runs, and checks its floors after Validate, the same for every kind.
	Safety      func(s *T) *Safety
	SafetyRules SafetyRules
	// Unnested lists paths inside the section of mappings an earlier
	// version nested keys under that now stand beside them ("caps": the
	// file may write caps: {maxDeletesPerRun: 5} or maxDeletesPerRun: 5,
	// not both). Their keys are read as the parent's, and problems with
	// them name the place the file wrote them.
	Unnested []string
	// Was lists the section's old keys: a file that still says one works,
	// with a warning naming Key.
	Was []string
	// Moved lists keys an earlier version kept in another section: each
	// is an old full path and the path inside this section it now has, ""
	// for the section itself (the old mapping's keys stand in it). The
	// old place still works, with a warning naming the new one.
	Moved [][2]string
}

// Report records a section's problems.
type Report struct {
	key string
	ps  *problems
}

// Add records a problem at a path inside the section ("" for the section).
func (r *Report) Add(path, format string, args ...any) {
	r.ps.add(r.Path(path), format, args...)
}

// Path is the full path of a path inside the section, for a message that
// names another field: Path("networks[0]") is ec2Interfaces.networks[0].
func (r *Report) Path(p string) string {
	if p == "" {
		return r.key
	}
	return join(r.key, p)
}

// SectionInfo is what the registry knows of a section, for documentation
// and tests.
type SectionInfo struct {
	Key       string
	Doc       string
	Reference string
	Type      reflect.Type
	// Safety is how the section has its Safety, nil when it has none.
	Safety *SafetyRules
}

type section struct {
	SectionInfo
	defaults func(v any, set func(string) bool)
	validate func(v any, report *Report)
	aws      func(v any) []EKSDiscovery
	check    func(v any, c *Config, report *Report)
	norm     func(v any, report *Report)
	gke      func(v any) GKEDiscovery
	safety   func(v any) *Safety
	rules    SafetyRules
	unnested []string
	was      []string
	moved    [][2]string
	always   bool
}

var (
	registryMu sync.RWMutex
	registry   []section
)

// Register adds a kind's section. It panics on a key that is already a
// section or a global key: two owners of one key is a programming error.
func Register[T any](spec SectionSpec[T]) {
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("config: section %q must be a struct type, not %s", spec.Key, t))
	}
	if spec.Key == "" {
		panic("config: a section needs a key")
	}
	for _, f := range fieldsOf(reflect.TypeFor[Config]()) {
		if f.name == spec.Key {
			panic(fmt.Sprintf("config: section %q is already a global key", spec.Key))
		}
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	for _, s := range registry {
		if s.Key == spec.Key {
			panic(fmt.Sprintf("config: section %q is registered twice", spec.Key))
		}
	}
	s := section{SectionInfo: SectionInfo{Key: spec.Key, Doc: spec.Doc, Reference: spec.Reference, Type: t}}
	if spec.Defaults != nil {
		s.defaults = func(v any, set func(string) bool) { spec.Defaults(v.(*T), set) }
	}
	if spec.Validate != nil {
		s.validate = func(v any, report *Report) { spec.Validate(v.(*T), report) }
	}
	s.always = spec.Always
	if spec.Safety != nil {
		s.safety = func(v any) *Safety { return spec.Safety(v.(*T)) }
		s.rules = spec.SafetyRules
		s.SectionInfo.Safety = &s.rules
	}
	s.unnested = spec.Unnested
	s.was = spec.Was
	s.moved = spec.Moved
	if spec.GKE != nil {
		s.gke = func(v any) GKEDiscovery { return spec.GKE(v.(*T)) }
	}
	if spec.Normalize != nil {
		s.norm = func(v any, report *Report) { spec.Normalize(v.(*T), report) }
	}
	if spec.Check != nil {
		s.check = func(v any, c *Config, report *Report) { spec.Check(v.(*T), c, report) }
	}
	if spec.AWS != nil {
		s.aws = func(v any) []EKSDiscovery { return spec.AWS(v.(*T)) }
	}
	registry = append(registry, s)
}

// Sections lists the registered sections in registration order.
func Sections() []SectionInfo {
	registryMu.RLock()
	defer registryMu.RUnlock()
	out := make([]SectionInfo, len(registry))
	for i, s := range registry {
		out[i] = s.SectionInfo
	}
	return out
}

func registered() []section {
	registryMu.RLock()
	defer registryMu.RUnlock()
	return append([]section(nil), registry...)
}

// SectionOf returns the file's section under key, nil when the file has
// none (the kind is then off), or when T is not the key's registered type.
func SectionOf[T any](c *Config, key string) *T {
	if c == nil {
		return nil
	}
	v, _ := c.sections[key].(*T)
	return v
}

// SetSection puts a section into c, as if the file had it (for programs
// that build a Config in code, like tests); nil removes it.
func SetSection[T any](c *Config, key string, v *T) {
	if v == nil {
		delete(c.sections, key)
		return
	}
	if c.sections == nil {
		c.sections = map[string]any{}
	}
	c.sections[key] = v
}

// Fill sets *field to value unless the file set the key at path: a key the
// file sets explicitly, even to 0 or [], is kept and validated as written.
func Fill[T any](set func(string) bool, path string, field *T, value T) {
	if !set(path) {
		*field = value
	}
}

// decodeSections decodes the registered sections the tree has (the Config
// decode left their keys alone).
func (c *Config) decodeSections(d *decoder, tree any) {
	m, ok := tree.(map[string]any)
	if !ok {
		return
	}
	for _, s := range registered() {
		node, ok := m[s.Key]
		if !ok {
			if s.always {
				if c.sections == nil {
					c.sections = map[string]any{}
				}
				c.sections[s.Key] = reflect.New(s.Type).Interface()
			}
			continue
		}
		v := reflect.New(s.Type)
		d.present[s.Key] = true
		d.decode(s.Key, node, v.Elem())
		if c.sections == nil {
			c.sections = map[string]any{}
		}
		c.sections[s.Key] = v.Interface()
	}
}

// sectionDefaults and validateSections run each present section's own.
func (c *Config) sectionDefaults() {
	for _, s := range registered() {
		v, ok := c.sections[s.Key]
		if !ok {
			continue
		}
		if s.safety != nil {
			at := s.safetyPath()
			s.safety(v).fill(func(p string) bool { return c.present[join(at, p)] }, &s.rules)
		}
		if s.defaults != nil {
			s.defaults(v, func(p string) bool { return c.present[join(s.Key, p)] })
		}
	}
	for _, s := range registered() {
		v, ok := c.sections[s.Key]
		if ok && s.safety != nil && s.rules.GraceFrom != nil && !c.present[join(s.safetyPath(), "grace")] {
			s.safety(v).Grace = s.rules.GraceFrom(c)
		}
	}
}

func (c *Config) validateSections(ps *problems) {
	for _, s := range registered() {
		v, ok := c.sections[s.Key]
		if !ok {
			continue
		}
		report := &Report{key: s.Key, ps: ps}
		if s.validate != nil {
			s.validate(v, report)
		}
		if s.safety != nil {
			graceFrom := s.rules.GraceFrom != nil && !c.present[join(s.safetyPath(), "grace")]
			s.safety(v).check(report, &s.rules, graceFrom)
		}
	}
}

func (c *Config) normalizeSections(ps *problems) {
	for _, s := range registered() {
		if v, ok := c.sections[s.Key]; ok && s.norm != nil {
			s.norm(v, &Report{key: s.Key, ps: ps})
		}
	}
}

func (c *Config) checkSections(ps *problems) {
	for _, s := range registered() {
		if v, ok := c.sections[s.Key]; ok && s.check != nil {
			s.check(v, c, &Report{key: s.Key, ps: ps})
		}
	}
}

// sectionAWS lists what the present sections reach in AWS, in
// registration order.
func (c *Config) sectionAWS() []EKSDiscovery {
	var out []EKSDiscovery
	for _, s := range registered() {
		if v, ok := c.sections[s.Key]; ok && s.aws != nil {
			out = append(out, s.aws(v)...)
		}
	}
	return out
}

// sectionGKE is the first present section's Google Cloud reach.
func (c *Config) sectionGKE() (GKEDiscovery, bool) {
	for _, s := range registered() {
		if v, ok := c.sections[s.Key]; ok && s.gke != nil {
			return s.gke(v), true
		}
	}
	return GKEDiscovery{}, false
}

// Has says whether the file has the registered section key.
func (c *Config) Has(key string) bool {
	_, ok := c.sections[key]
	return ok
}

// sectionKeys are the registered keys, for the unknown-key messages.
func sectionKeys() []string {
	var out []string
	for _, s := range registered() {
		out = append(out, s.Key)
	}
	return out
}

// KeyPaths lists every key the file may set, as docs/configuration.md writes them
// (a.b, a[].b): the global ones, then each registered section's.
func KeyPaths() []string {
	out := keyPaths("", reflect.TypeFor[Config]())
	for _, s := range registered() {
		out = append(out, keyPaths(s.Key, s.Type)...)
	}
	without := withoutPaths()
	return slices.DeleteFunc(out, func(p string) bool { return without[p] })
}

// withoutPaths are the full paths of the Safety keys sections leave out
// (SafetyRules.Without): no key of the file.
func withoutPaths() map[string]bool {
	out := map[string]bool{}
	for _, s := range registered() {
		if s.safety == nil {
			continue
		}
		for _, k := range s.rules.Without {
			out[join(s.safetyPath(), k)] = true
		}
	}
	return out
}

// safetyPath is the full path of the part of the section that has its Safety.
func (s *section) safetyPath() string {
	if s.rules.At == "" {
		return s.Key
	}
	return join(s.Key, s.rules.At)
}

// unnestedPaths are the full paths of the sections' Unnested mappings.
func unnestedPaths() map[string]bool {
	out := map[string]bool{}
	for _, s := range registered() {
		for _, p := range s.unnested {
			out[join(s.Key, p)] = true
		}
	}
	return out
}

// keyPaths lists every key of t under prefix.
func keyPaths(prefix string, t reflect.Type) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Slice {
		return keyPaths(prefix+"[]", t.Elem())
	}
	if t.Kind() != reflect.Struct || reflect.PointerTo(t).Implements(unmarshalerType) {
		return []string{prefix}
	}
	var out []string
	for _, f := range fieldsOf(t) {
		out = append(out, keyPaths(join(prefix, f.name), t.FieldByIndex(f.index).Type)...)
	}
	return out
}
