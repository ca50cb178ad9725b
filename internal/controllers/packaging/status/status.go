// Package status holds what the App and PackageRepository reconcilers report alike: the results
// of the fetch, template and deploy stages, compared without their timestamps so that a
// converged object is not rewritten on every sync.
package status

import (
	kappctrlv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ExitCode is a stage's exit code, as kapp-controller reports it: 1 on error.
func ExitCode(err error) int {
	if err != nil {
		return 1
	}
	return 0
}

// Error is a stage's error text.
func Error(err error) string {
	if err != nil {
		return err.Error()
	}
	return ""
}

// Stages are the stage results of a status, as pointers into a copy of it.
type Stages struct {
	Fetch     *kappctrlv1alpha1.AppStatusFetch
	Template  *kappctrlv1alpha1.AppStatusTemplate
	Deploy    *kappctrlv1alpha1.AppStatusDeploy
	Successes *int
}

// ClearTimes zeroes the stages' timestamps and caps the success count at one, leaving what a
// comparison should see.
func (s Stages) ClearTimes() {
	if s.Fetch != nil {
		s.Fetch.StartedAt, s.Fetch.UpdatedAt = metav1.Time{}, metav1.Time{}
	}
	if s.Template != nil {
		s.Template.UpdatedAt = metav1.Time{}
	}
	if s.Deploy != nil {
		s.Deploy.StartedAt, s.Deploy.UpdatedAt = metav1.Time{}, metav1.Time{}
	}
	if s.Successes != nil {
		*s.Successes = min(*s.Successes, 1)
	}
}
