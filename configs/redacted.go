package config

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	yamlv2 "go.yaml.in/yaml/v2"
)

// Redacted returns the effective configuration, defaults included, as YAML in
// the file's own field order, with every Secret shown as <secret>. It is what
// `reclaim config check --print` shows, and it loads back as the same Config.
func (c *Config) Redacted() ([]byte, error) {
	tree, err := toYAMLTree(reflect.ValueOf(c), "")
	if err != nil {
		return nil, err
	}
	m, _ := tree.(yamlv2.MapSlice)
	for _, s := range registered() {
		v, ok := c.sections[s.Key]
		if !ok {
			continue
		}
		item, err := toYAMLTree(reflect.ValueOf(v), s.Key)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Key, err)
		}
		m = append(m, yamlv2.MapItem{Key: s.Key, Value: item})
	}
	return yamlv2.Marshal(m)
}

func redactedYAML(v any) ([]byte, error) {
	tree, err := toYAMLTree(reflect.ValueOf(v), "")
	if err != nil {
		return nil, err
	}
	return yamlv2.Marshal(tree)
}

var marshalerType = reflect.TypeFor[json.Marshaler]()

// toYAMLTree converts v to plain values and yaml.MapSlice, keeping struct field
// order. Types with their own JSON form (Duration, Percent, Size, Secret) are
// written in that form, which is the form the file accepts. path is v's
// path in the file: the Safety keys a section leaves out are not shown.
func toYAMLTree(v reflect.Value, path string) (any, error) {
	if v.Type().Implements(marshalerType) && (v.Kind() != reflect.Pointer || !v.IsNil()) {
		raw, err := v.Interface().(json.Marshaler).MarshalJSON()
		if err != nil {
			return nil, err
		}
		var out any
		err = json.Unmarshal(raw, &out)
		return out, err
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return nil, nil
		}
		return toYAMLTree(v.Elem(), path)
	case reflect.Struct:
		var m yamlv2.MapSlice
		without := withoutPaths()
		for _, f := range fieldsOf(v.Type()) {
			if without[join(path, f.name)] {
				continue
			}
			fv := v.FieldByIndex(f.index)
			tag := v.Type().FieldByIndex(f.index).Tag.Get("json")
			if (strings.Contains(tag, ",omitempty") && fv.IsZero()) || (strings.Contains(tag, ",omitzero") && fv.IsZero()) {
				continue
			}
			item, err := toYAMLTree(fv, join(path, f.name))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f.name, err)
			}
			m = append(m, yamlv2.MapItem{Key: f.name, Value: item})
		}
		return m, nil
	case reflect.Slice:
		out := make([]any, v.Len())
		for i := range v.Len() {
			item, err := toYAMLTree(v.Index(i), index(path, i))
			if err != nil {
				return nil, err
			}
			out[i] = item
		}
		return out, nil
	case reflect.String:
		return v.String(), nil
	case reflect.Bool:
		return v.Bool(), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int(), nil
	case reflect.Float32:
		return float32(v.Float()), nil
	case reflect.Float64:
		return v.Float(), nil
	}
	return nil, fmt.Errorf("cannot print %s", v.Type())
}
