// Package jsonstr appends strings as encoding/json writes them, without
// its reflection: for the lines a run writes per resource (the audit log,
// the state journal), whose encoders are held to json.Marshal by tests.
package jsonstr

import "encoding/json"

// Append appends s as json.Marshal writes a string: as is between quotes
// when it is printable ASCII that needs no escape (json.Marshal escapes
// <, > and & too), else by json.Marshal itself.
func Append(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
