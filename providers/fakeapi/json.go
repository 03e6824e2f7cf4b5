package fakeapi

import (
	"cmp"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// AWSOptions configure an AWS JSON fake: the account and region it answers
// as, and the latency it adds to every call.
type AWSOptions struct {
	Account, Region string
	Latency         time.Duration
}

// WithDefaults returns o with account 123456789012 and region us-east-1
// where they are empty.
func (o AWSOptions) WithDefaults() AWSOptions {
	o.Account = cmp.Or(o.Account, "123456789012")
	o.Region = cmp.Or(o.Region, "us-east-1")
	return o
}

// WriteJSON answers v as a REST-JSON service does: an application/json body.
func WriteJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// WriteError answers a REST-JSON error as EKS and Batch do: the code in
// X-Amzn-Errortype, the message in the body.
func WriteError(w http.ResponseWriter, status int, code, msg string) {
	WriteErrorBody(w, status, code, map[string]string{"message": msg})
}

// WriteErrorBody answers a REST-JSON error whose body is the service's own
// (Lambda's {"Type","Message"}), the code in X-Amzn-Errortype.
func WriteErrorBody(w http.ResponseWriter, status int, code string, body any) {
	w.Header().Set("X-Amzn-Errortype", code)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// Page is the page of at most max items that token starts ("" the first;
// else prefix and an offset), and the token of the next page, "" after the
// last; ok is false for a token the fake did not give.
func Page[T any](items []T, max int, token, prefix string) (page []T, next string, ok bool) {
	start := 0
	if token != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(token, prefix))
		if err != nil || n < 0 || n > len(items) {
			return nil, "", false
		}
		start = n
	}
	end := min(start+max, len(items))
	if end < len(items) {
		next = prefix + strconv.Itoa(end)
	}
	return items[start:end], next, true
}
