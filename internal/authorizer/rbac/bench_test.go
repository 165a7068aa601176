package rbac

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/internal/authorizer"
)

// benchAuthorizer is the server's chain (system:masters first, then RBAC)
// over 1,000 ClusterRoleBindings and 1,000 RoleBindings, each naming a
// different user, one of which is the benchmark's.
func benchAuthorizer(b *testing.B) authorizer.Authorizer {
	objs := []runtime.Object{clusterRole("edit", rule(s("*"), s("", "apps"), s("pods", "deployments", "replicasets")))}
	for i := range 1000 {
		objs = append(objs,
			clusterRoleBinding(fmt.Sprintf("crb-%d", i), "edit", user(fmt.Sprintf("cluster-user-%d", i))),
			roleBinding(fmt.Sprintf("ns-%d", i%50), fmt.Sprintf("rb-%d", i), "ClusterRole", "edit",
				serviceAccount("", fmt.Sprintf("sa-%d", i))))
	}
	return authorizer.Union(authorizer.PrivilegedGroups(authorizer.SystemMasters), authorizer.Named("rbac", fed(b, objs...)))
}

func benchAuthorize(b *testing.B, a authorizer.Authorizer, attrs authorizer.Attributes, want authorizer.Decision) {
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if d, _, _ := a.Authorize(ctx, attrs); d != want {
				b.Errorf("decision %v, want %v", d, want)
				return
			}
		}
	})
}

// BenchmarkAuthorize measures the hot path: a service account allowed by
// one RoleBinding among 2,000 bindings, a user allowed by one
// ClusterRoleBinding, one refused, and a member of system:masters.
func BenchmarkAuthorize(b *testing.B) {
	a := benchAuthorizer(b)
	sa := authorizer.User{Name: "system:serviceaccount:ns-7:sa-507",
		Groups: s("system:serviceaccounts", "system:serviceaccounts:ns-7", "system:authenticated")}
	b.Run("rolebinding", func(b *testing.B) {
		attrs := res("create", "", "pods", "", "ns-7", "")
		attrs.User = sa
		benchAuthorize(b, a, attrs, authorizer.DecisionAllow)
	})
	b.Run("clusterrolebinding", func(b *testing.B) {
		attrs := res("update", "apps", "deployments", "status", "ns-3", "web")
		attrs.Subresource = ""
		attrs.User = authorizer.User{Name: "cluster-user-999", Groups: s("system:authenticated")}
		benchAuthorize(b, a, attrs, authorizer.DecisionAllow)
	})
	b.Run("refused", func(b *testing.B) {
		attrs := res("get", "", "secrets", "", "ns-7", "x")
		attrs.User = sa
		benchAuthorize(b, a, attrs, authorizer.DecisionNoOpinion)
	})
	b.Run("system:masters", func(b *testing.B) {
		attrs := res("create", "", "pods", "", "ns-7", "")
		attrs.User = authorizer.User{Name: "setpoint-admin", Groups: s(authorizer.SystemMasters, "system:authenticated")}
		benchAuthorize(b, a, attrs, authorizer.DecisionAllow)
	})
}
