package testenv

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	authv1 "k8s.io/api/authentication/v1"
)

// Authenticator checks a bearer token the way a managed cluster's
// authenticator does (EKS's aws-iam-authenticator, GKE's OAuth check) and
// returns the user it belongs to; ok false rejects it.
type Authenticator func(token string) (user string, groups []string, ok bool)

// tokenWebhook serves the TokenReview API for kube-apiserver's
// --authentication-token-webhook-config-file: the API server asks it about
// every bearer token its own token file does not know.
func tokenWebhook(auth Authenticator) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var tr authv1.TokenReview
		if err := json.NewDecoder(r.Body).Decode(&tr); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		user, groups, ok := auth(tr.Spec.Token)
		tr.Spec = authv1.TokenReviewSpec{} // never echo the token
		tr.Status = authv1.TokenReviewStatus{Authenticated: ok}
		if ok {
			tr.Status.User = authv1.UserInfo{Username: user, Groups: groups}
		} else {
			tr.Status.Error = "token rejected"
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(tr)
	}))
}

// webhookArgs writes the webhook's kubeconfig into dir and returns the API
// server flags that use it, with a short cache so that a token's expiry
// shows within a test.
func webhookArgs(dir, url string) ([]string, error) {
	path := filepath.Join(dir, "token-webhook.kubeconfig")
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
  - name: webhook
    cluster:
      server: %s
users:
  - name: apiserver
contexts:
  - name: webhook
    context: {cluster: webhook, user: apiserver}
current-context: webhook
`, url)
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		return nil, err
	}
	return []string{
		"--authentication-token-webhook-config-file=" + path,
		"--authentication-token-webhook-version=v1",
		"--authentication-token-webhook-cache-ttl=1s",
	}, nil
}
