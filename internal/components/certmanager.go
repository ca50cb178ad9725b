package components

import (
	"context"
	"flag"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/slipway-dev/slipway/internal/controllers/certmanager"
)

// The cert-manager components run slipway's cert-manager (see package certmanager) from the
// pods of cert-manager's three Deployments, so that the bootstrap cluster shows what TKG's does.

func certManagerController() Component {
	return Component{Name: "cert-manager-controller", Run: runCertManagerController}
}

func certManagerCAInjector() Component {
	return Component{Name: "cert-manager-cainjector", Run: runCertManagerCAInjector}
}

func certManagerWebhook() Component {
	return Component{Name: "cert-manager-webhook", Run: runCertManagerWebhook}
}

func runCertManagerController(ctx context.Context, args []string) error {
	flags := flag.NewFlagSet("cert-manager-controller", flag.ContinueOnError)
	mf := addManagerFlags(flags, ":9403")
	clusterResourceNamespace := flags.String("cluster-resource-namespace", certmanager.DefaultClusterResourceNamespace, "namespace of ClusterIssuers' Secrets (cert-manager's own namespace)")
	flags.Int("v", 2, "log verbosity")
	if err := flags.Parse(args); err != nil {
		return err
	}
	return runManager(ctx, mf, false, func(mgr ctrl.Manager) error {
		if err := (&certmanager.CertificateReconciler{Client: mgr.GetClient(), ClusterResourceNamespace: *clusterResourceNamespace}).SetupWithManager(mgr); err != nil {
			return err
		}
		for _, gvk := range []schema.GroupVersionKind{certmanager.IssuerGVK, certmanager.ClusterIssuerGVK} {
			r := &certmanager.IssuerReconciler{Client: mgr.GetClient(), GVK: gvk, ClusterResourceNamespace: *clusterResourceNamespace}
			if err := r.SetupWithManager(mgr); err != nil {
				return err
			}
		}
		return nil
	})
}

func runCertManagerCAInjector(ctx context.Context, args []string) error {
	flags := flag.NewFlagSet("cert-manager-cainjector", flag.ContinueOnError)
	mf := addManagerFlags(flags, ":9404")
	flags.Int("v", 2, "log verbosity")
	if err := flags.Parse(args); err != nil {
		return err
	}
	return runManager(ctx, mf, false, func(mgr ctrl.Manager) error {
		for _, obj := range []certmanager.Injectable{
			&admissionregistrationv1.ValidatingWebhookConfiguration{},
			&admissionregistrationv1.MutatingWebhookConfiguration{},
			&apiextensionsv1.CustomResourceDefinition{},
		} {
			if err := (&certmanager.CAInjector{Client: mgr.GetClient(), Object: obj}).SetupWithManager(mgr); err != nil {
				return err
			}
		}
		return nil
	})
}

func runCertManagerWebhook(ctx context.Context, args []string) error {
	flags := flag.NewFlagSet("cert-manager-webhook", flag.ContinueOnError)
	mf := addManagerFlags(flags, ":6080")
	flags.Int("v", 2, "log verbosity")
	if err := flags.Parse(args); err != nil {
		return err
	}
	return runManager(ctx, mf, true, func(mgr ctrl.Manager) error {
		mgr.GetWebhookServer().Register(certmanager.ValidatePath, &admission.Webhook{Handler: certmanager.Validator{}})
		return nil
	})
}
