package config

import (
	"net"
	"net/url"
	"slices"
	"strings"
)

// Proxy is the HTTP proxy of the cluster's nodes, as the ClusterClasses' proxy variable holds it.
type Proxy struct {
	HTTPProxy  string `json:"httpProxy"`
	HTTPSProxy string `json:"httpsProxy"`
	// NoProxy are the hosts, domains and CIDRs reached directly: TKG_NO_PROXY completed.
	NoProxy []string `json:"noProxy"`
	// SystemWide makes it every process's proxy on the nodes (TKG_NODE_SYSTEM_WIDE_PROXY).
	SystemWide bool `json:"systemWide,omitempty"`
}

// proxy reads the proxy variables as TKG does: the proxies are used when TKG_HTTP_PROXY_ENABLED
// is true, and then both are needed; a proxy set without TKG_HTTP_PROXY_ENABLED is an error.
func (k *completer) proxy() {
	proxies := k.set(HTTPProxy, HTTPSProxy)
	enabled, ok := k.v.Get(HTTPProxyEnabled)
	if !ok {
		if len(proxies) > 0 {
			k.bad("%s is set but %s is not: set %s to true to use the proxy, or to false to ignore it", strings.Join(proxies, " and "), HTTPProxyEnabled, HTTPProxyEnabled)
		}
		return
	}
	if !k.boolean(HTTPProxyEnabled, enabled) {
		k.unusedBy(HTTPProxyEnabled+" is "+enabled, HTTPProxy, HTTPSProxy)
		return
	}
	k.c.Proxy = &Proxy{HTTPProxy: k.proxyURL(HTTPProxy), HTTPSProxy: k.proxyURL(HTTPSProxy), NoProxy: k.noProxy()}
}

// proxyURL reads one proxy's URL: a scheme and a host, an address of the cluster's IP family.
func (k *completer) proxyURL(name string) string {
	const example = "use the proxy's URL, as http://proxy.example.com:3128"
	value, ok := k.v.Get(name)
	if !ok {
		k.bad("%s is not set but %s is true: %s", name, HTTPProxyEnabled, example)
		return ""
	}
	u, err := url.Parse(value)
	switch {
	case err != nil:
		k.bad("invalid %s %q: %v: %s", name, value, err, example)
	case u.Scheme == "":
		k.bad("invalid %s %q: scheme is missing from the proxy URL: %s", name, value, example)
	case u.Host == "":
		k.bad("invalid %s %q: hostname is missing from the proxy URL: %s", name, value, example)
	default:
		if ip := net.ParseIP(u.Hostname()); ip != nil && !k.c.hasFamily(ip) {
			k.bad("invalid %s %q, expected to be an address of type %q (%s)", name, value, k.c.IPFamily, IPFamily)
		}
	}
	return value
}

// noProxy completes TKG_NO_PROXY as TKG does: its entries without blanks, then the cluster's
// pod and service CIDRs, localhost, 127.0.0.1 (and ::1 on IPv6), .svc and .svc.cluster.local,
// each once. TKG adds nothing for vSphere.
func (k *completer) noProxy() []string {
	var list []string
	add := func(entries ...string) {
		for _, e := range entries {
			if e != "" && !slices.Contains(list, e) {
				list = append(list, e)
			}
		}
	}
	if value, ok := k.v.Get(NoProxy); ok {
		compact := strings.Join(strings.Fields(value), "")
		if strings.Contains(compact, "*") {
			k.bad("invalid %s %q: invalid string '*' in %s: list hosts, domains and CIDRs, as .example.com,10.0.0.0/8", NoProxy, value, NoProxy)
		}
		add(strings.Split(compact, ",")...)
	}
	add(strings.Split(k.c.ClusterCIDR, ",")...)
	add(strings.Split(k.c.ServiceCIDR, ",")...)
	add("localhost", "127.0.0.1")
	if slices.Contains(k.c.families(), "ipv6") {
		add("::1")
	}
	add(".svc", ".svc.cluster.local")
	return list
}
