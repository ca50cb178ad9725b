package ui

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/vmware/govmomi/vim25/soap"

	"github.com/slipway-dev/slipway/internal/config"
	"github.com/slipway-dev/slipway/internal/vsphere/prerequisites"
)

// vsphereAnswer is what the vSphere page gets when it connects: the certificate's thumbprint
// for the user to accept when the configuration does not hold it yet, or what the vCenter
// offers, or the errors by variable.
type vsphereAnswer struct {
	// Host and Thumbprint are the vCenter's, when Accept asks the user to accept them.
	Host       string `json:"host,omitempty"`
	Thumbprint string `json:"thumbprint,omitempty"`
	Accept     bool   `json:"accept,omitempty"`
	// Configured is the VSPHERE_TLS_THUMBPRINT the certificate does not match, when one is set:
	// the page warns that another server may answer for the vCenter.
	Configured string `json:"configured,omitempty"`

	Inventory *prerequisites.Inventory `json:"inventory,omitempty"`
	Errors    map[string][]string      `json:"errors,omitempty"`
	General   []string                 `json:"general,omitempty"`
}

// vsphere connects to the configured vCenter as the create flow's checks do: it first shows
// the certificate's thumbprint for the user to accept (TKG's prompt), then logs in and lists the
// datacenters and, in the one chosen, the networks, resource pools, datastores and folders.
func (s *Server) vsphere(w http.ResponseWriter, r *http.Request) {
	var req configRequest
	if err := readJSON(r, &req); err != nil {
		apiError(w, http.StatusBadRequest, err)
		return
	}
	v := func(name string) string { return strings.TrimSpace(req.Variables[name]) }
	env := prerequisites.Environment{Server: v(config.VSphereServer), Username: v(config.VSphereUsername), Password: v(config.VSpherePassword),
		Thumbprint: v(config.VSphereTLSThumbprint), Insecure: v(config.VSphereInsecure) == "true", Datacenter: v(config.VSphereDatacenter)}
	answer := &vsphereAnswer{Errors: map[string][]string{}}
	refuse := func(err error) {
		if name := variableOf(err.Error()); name != "" {
			answer.Errors[name] = append(answer.Errors[name], err.Error())
		} else {
			answer.General = append(answer.General, err.Error())
		}
		writeJSON(w, http.StatusUnprocessableEntity, answer)
	}
	for _, name := range []string{config.VSphereServer, config.VSphereUsername, config.VSpherePassword} {
		if v(name) == "" {
			answer.Errors[name] = append(answer.Errors[name], name+" is not set: fill it in to reach the vCenter")
		}
	}
	if len(answer.Errors) > 0 {
		writeJSON(w, http.StatusUnprocessableEntity, answer)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	if !env.Insecure {
		u, err := soap.ParseURL(env.Server)
		if err != nil || u == nil {
			refuse(fmt.Errorf("invalid %s %q: use the vCenter's host name or address, with :PORT when it is not 443", config.VSphereServer, env.Server))
			return
		}
		actual, err := prerequisites.ServerThumbprint(ctx, u.Host)
		if err != nil {
			refuse(fmt.Errorf("cannot reach vSphere %s (%s): %w: check %s and that this host can reach it", u.Host, config.VSphereServer, err, config.VSphereServer))
			return
		}
		if !strings.EqualFold(actual, env.Thumbprint) {
			writeJSON(w, http.StatusOK, &vsphereAnswer{Host: u.Host, Thumbprint: actual, Accept: true, Configured: env.Thumbprint})
			return
		}
	}
	inv, err := prerequisites.Browse(ctx, env)
	if err != nil {
		refuse(err)
		return
	}
	writeJSON(w, http.StatusOK, &vsphereAnswer{Inventory: inv})
}
