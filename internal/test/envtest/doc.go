// Package envtest starts the real kube-apiserver and etcd that hack/tools builds, with slipway's
// CRDs and Cluster API's CRDs installed, once per test package. Every integration test runs
// against it rather than against a fake client.
//
//	var env *envtest.Environment
//
//	func TestMain(m *testing.M) {
//		os.Exit(envtest.Run(m, func(e *envtest.Environment) { env = e }))
//	}
package envtest
