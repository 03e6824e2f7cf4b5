package testenv

import (
	"context"
	"fmt"
	"strings"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"reclaim.dev/reclaim/inventory/kube"
)

// WorkflowGVR is the resource InstallWorkflowCRD installs.
var WorkflowGVR = kube.WorkflowGVR

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// Grant gives user the rules cluster-wide through a new ClusterRole and
// ClusterRoleBinding (named testenv-grant-<user>-<random>), so repeated calls
// add up. It returns once the authorizer honours the rules, checked with a
// SubjectAccessReview per rule (RBAC reaches the authorizer via informers, so
// there is a short delay).
func (c *Cluster) Grant(ctx context.Context, user string, rules []rbacv1.PolicyRule) error {
	prefix := "testenv-grant-" + strings.ToLower(safeName(user)) + "-"
	role, err := c.Client.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{GenerateName: prefix},
		Rules:      rules,
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("testenv: creating ClusterRole for %s: %w", user, err)
	}
	_, err = c.Client.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("testenv: creating ClusterRoleBinding for %s: %w", user, err)
	}

	for _, rule := range rules {
		spec, ok := accessReviewFor(user, rule)
		if !ok {
			continue
		}
		err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
			sar, err := c.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx,
				&authorizationv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
			if err != nil {
				return false, err
			}
			return sar.Status.Allowed, nil
		})
		if err != nil {
			return fmt.Errorf("testenv: waiting for %s to be granted %+v: %w", user, rule, err)
		}
	}
	return nil
}

// accessReviewFor builds a request that rule, and only a rule at least as
// broad, allows: the first verb, group, resource and name of the rule.
func accessReviewFor(user string, rule rbacv1.PolicyRule) (authorizationv1.SubjectAccessReviewSpec, bool) {
	spec := authorizationv1.SubjectAccessReviewSpec{User: user, Groups: []string{"system:authenticated"}}
	if len(rule.Verbs) == 0 {
		return spec, false
	}
	if len(rule.NonResourceURLs) > 0 {
		spec.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Path: rule.NonResourceURLs[0], Verb: rule.Verbs[0]}
		return spec, true
	}
	if len(rule.APIGroups) == 0 || len(rule.Resources) == 0 {
		return spec, false
	}
	resource, subresource, _ := strings.Cut(rule.Resources[0], "/")
	ra := &authorizationv1.ResourceAttributes{Verb: rule.Verbs[0], Group: rule.APIGroups[0], Resource: resource, Subresource: subresource}
	if len(rule.ResourceNames) > 0 {
		ra.Name = rule.ResourceNames[0]
	}
	spec.ResourceAttributes = ra
	return spec, true
}

// InstallWorkflowCRD installs Argo's workflows.argoproj.io CRD (v1alpha1,
// namespaced, kind Workflow, schema preserving unknown fields, no status
// subresource so tests can write status with a plain create/update) and waits
// until it is Established and served. Installing it twice is fine.
func (c *Cluster) InstallWorkflowCRD(ctx context.Context) error {
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": "workflows.argoproj.io"},
		"spec": map[string]any{
			"group": "argoproj.io",
			"names": map[string]any{
				"kind":       "Workflow",
				"listKind":   "WorkflowList",
				"plural":     "workflows",
				"singular":   "workflow",
				"shortNames": []any{"wf"},
			},
			"scope": "Namespaced",
			"versions": []any{map[string]any{
				"name":    "v1alpha1",
				"served":  true,
				"storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type":                                 "object",
					"x-kubernetes-preserve-unknown-fields": true,
				}},
			}},
		},
	}}
	return c.InstallCRD(ctx, crd, WorkflowGVR)
}

// InstallCRD installs a CustomResourceDefinition and waits until it is
// Established and served (one of its resources is listed).
// Installing it twice is fine.
func (c *Cluster) InstallCRD(ctx context.Context, crd *unstructured.Unstructured, served schema.GroupVersionResource) error {
	client := c.Dynamic.Resource(crdGVR)
	if _, err := client.Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("testenv: creating CRD %s: %w", crd.GetName(), err)
	}
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := client.Get(ctx, crd.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, cond := range conds {
			m, _ := cond.(map[string]any)
			if m["type"] == "Established" && m["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("testenv: waiting for CRD %s to be Established: %w", crd.GetName(), err)
	}
	// Established can precede the resource being served by a moment.
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := c.Dynamic.Resource(served).List(ctx, metav1.ListOptions{Limit: 1})
		return err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("testenv: waiting for %s to be served: %w", served.GroupResource(), err)
	}
	return nil
}
