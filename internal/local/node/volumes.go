package node

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/local/cluster"
	"github.com/slipway-dev/slipway/internal/local/podenv"
)

// volumeFiles returns the files a volume holds, by path relative to the volume; nil for a
// volume that is a plain directory.
func (w *podWorker) volumeFiles(ctx context.Context, v corev1.Volume) (map[string][]byte, error) {
	a, pod := w.agent, w.pod
	switch {
	case v.Secret != nil:
		secret := &corev1.Secret{}
		if err := a.client.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: v.Secret.SecretName}, secret); err != nil {
			if ptr.Deref(v.Secret.Optional, false) {
				return map[string][]byte{}, nil
			}
			return nil, fmt.Errorf("secret %q: %w", v.Secret.SecretName, err)
		}
		return project(secret.Data, v.Secret.Items), nil
	case v.ConfigMap != nil:
		cm := &corev1.ConfigMap{}
		if err := a.client.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: v.ConfigMap.Name}, cm); err != nil {
			if ptr.Deref(v.ConfigMap.Optional, false) {
				return map[string][]byte{}, nil
			}
			return nil, fmt.Errorf("configmap %q: %w", v.ConfigMap.Name, err)
		}
		return project(configMapData(cm), v.ConfigMap.Items), nil
	case v.Projected != nil:
		files := map[string][]byte{}
		for _, src := range v.Projected.Sources {
			var part map[string][]byte
			var err error
			switch {
			case src.ServiceAccountToken != nil:
				var token []byte
				token, err = w.token(ctx, src.ServiceAccountToken)
				part = map[string][]byte{src.ServiceAccountToken.Path: token}
			case src.ConfigMap != nil:
				part, err = w.volumeFiles(ctx, corev1.Volume{VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: src.ConfigMap.LocalObjectReference, Items: src.ConfigMap.Items, Optional: src.ConfigMap.Optional}}})
			case src.Secret != nil:
				part, err = w.volumeFiles(ctx, corev1.Volume{VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
					SecretName: src.Secret.Name, Items: src.Secret.Items, Optional: src.Secret.Optional}}})
			case src.DownwardAPI != nil:
				part = w.downwardFiles(src.DownwardAPI.Items)
			}
			if err != nil {
				return nil, err
			}
			for k, v := range part {
				files[k] = v
			}
		}
		return files, nil
	case v.DownwardAPI != nil:
		return w.downwardFiles(v.DownwardAPI.Items), nil
	default:
		// emptyDir, hostPath and the rest are plain directories of the pod.
		return nil, nil
	}
}

func configMapData(cm *corev1.ConfigMap) map[string][]byte {
	data := map[string][]byte{}
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		data[k] = v
	}
	return data
}

func project(data map[string][]byte, items []corev1.KeyToPath) map[string][]byte {
	if len(items) == 0 {
		return data
	}
	files := map[string][]byte{}
	for _, item := range items {
		if v, ok := data[item.Key]; ok {
			files[item.Path] = v
		}
	}
	return files
}

func (w *podWorker) downwardFiles(items []corev1.DownwardAPIVolumeFile) map[string][]byte {
	files := map[string][]byte{}
	for _, item := range items {
		if item.FieldRef != nil {
			files[item.Path] = []byte(w.fieldValue(item.FieldRef.FieldPath))
		}
	}
	return files
}

// token asks the API server for a token of the pod's service account, bound to the pod.
func (w *podWorker) token(ctx context.Context, src *corev1.ServiceAccountTokenProjection) ([]byte, error) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: w.pod.Namespace, Name: serviceAccountName(w.pod)}}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: ptr.To(ptr.Deref(src.ExpirationSeconds, 3607)),
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: w.pod.Name, UID: w.pod.UID},
	}}
	if src.Audience != "" {
		req.Spec.Audiences = []string{src.Audience}
	}
	if err := w.agent.client.SubResource("token").Create(ctx, sa, req); err != nil {
		return nil, fmt.Errorf("failed to request a token for ServiceAccount %s: %w", klog.KObj(sa), err)
	}
	w.tokenIssued, w.tokenExpiry = time.Now(), req.Status.ExpirationTimestamp.Time
	return []byte(req.Status.Token), nil
}

func serviceAccountName(pod *corev1.Pod) string {
	if pod.Spec.ServiceAccountName != "" {
		return pod.Spec.ServiceAccountName
	}
	return "default"
}

// writeVolumes writes every volume of the pod into its directory and returns the mount table a
// container's process gets.
func (w *podWorker) writeVolumes(ctx context.Context) error {
	for _, v := range w.pod.Spec.Volumes {
		files, err := w.volumeFiles(ctx, v)
		if err != nil {
			return fmt.Errorf("failed to prepare volume %q: %w", v.Name, err)
		}
		dir := filepath.Join(w.dir, "volumes", v.Name)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		for path, data := range files {
			target := filepath.Join(dir, path)
			if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
				return err
			}
			if err := writeIfChanged(target, data); err != nil {
				return err
			}
		}
	}
	w.volumesWritten = time.Now()
	return nil
}

func writeIfChanged(path string, data []byte) error {
	if old, err := os.ReadFile(path); err == nil && string(old) == string(data) {
		return nil
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// mounts returns a container's mount table as EnvMounts wants it.
func (w *podWorker) mounts(c *corev1.Container) (string, error) {
	table := map[string]string{}
	for _, m := range c.VolumeMounts {
		table[filepath.Clean(m.MountPath)] = filepath.Join(w.dir, "volumes", m.Name, m.SubPath)
	}
	data, err := json.Marshal(table)
	return string(data), err
}

// fieldValue resolves a downward API field path.
func (w *podWorker) fieldValue(path string) string {
	pod := w.pod
	switch {
	case path == "metadata.name":
		return pod.Name
	case path == "metadata.namespace":
		return pod.Namespace
	case path == "metadata.uid":
		return string(pod.UID)
	case path == "spec.nodeName":
		return pod.Spec.NodeName
	case path == "spec.serviceAccountName":
		return serviceAccountName(pod)
	case path == "status.podIP", path == "status.podIPs":
		return w.podIP
	case path == "status.hostIP", path == "status.hostIPs":
		return w.agent.node.Address
	case strings.HasPrefix(path, "metadata.labels['"):
		return pod.Labels[strings.TrimSuffix(strings.TrimPrefix(path, "metadata.labels['"), "']")]
	case strings.HasPrefix(path, "metadata.annotations['"):
		return pod.Annotations[strings.TrimSuffix(strings.TrimPrefix(path, "metadata.annotations['"), "']")]
	}
	return ""
}

// env returns a container's environment: the host's PATH and HOME, the Kubernetes service
// variables pointing at the real endpoint, the pod's env and envFrom, and slipway's pod
// variables.
func (w *podWorker) env(ctx context.Context, c *corev1.Container) ([]string, error) {
	a := w.agent
	vars := map[string]string{
		"PATH":                    os.Getenv("PATH"),
		"HOME":                    filepath.Join(w.dir, "root"),
		"HOSTNAME":                w.pod.Name,
		"KUBERNETES_SERVICE_HOST": a.spec.EndpointHost(),
		"KUBERNETES_SERVICE_PORT": fmt.Sprint(cluster.APIServerPort),
	}
	order := []string{"PATH", "HOME", "HOSTNAME", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"}
	set := func(k, v string) {
		if _, ok := vars[k]; !ok {
			order = append(order, k)
		}
		vars[k] = v
	}
	for _, from := range c.EnvFrom {
		data, err := w.envFromData(ctx, from)
		if err != nil {
			return nil, err
		}
		for k, v := range data {
			set(from.Prefix+k, v)
		}
	}
	for _, e := range c.Env {
		v, err := w.envValue(ctx, e)
		if err != nil {
			return nil, err
		}
		set(e.Name, v)
	}
	mounts, err := w.mounts(c)
	if err != nil {
		return nil, err
	}
	set(podenv.EnvPodDir, w.dir)
	set(podenv.EnvPodIP, w.ip)
	set(podenv.EnvMounts, mounts)
	set(podenv.EnvLocalStore, filepath.Dir(a.dirs.Root))
	set(podenv.EnvLocalCluster, filepath.Base(a.dirs.Root))
	env := make([]string, 0, len(order))
	for _, k := range order {
		env = append(env, k+"="+vars[k])
	}
	return env, nil
}

func (w *podWorker) envValue(ctx context.Context, e corev1.EnvVar) (string, error) {
	if e.ValueFrom == nil {
		return e.Value, nil
	}
	ns := w.pod.Namespace
	switch src := e.ValueFrom; {
	case src.FieldRef != nil:
		return w.fieldValue(src.FieldRef.FieldPath), nil
	case src.SecretKeyRef != nil:
		s := &corev1.Secret{}
		if err := w.agent.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: src.SecretKeyRef.Name}, s); err != nil {
			if ptr.Deref(src.SecretKeyRef.Optional, false) {
				return "", nil
			}
			return "", fmt.Errorf("env %s: secret %q: %w", e.Name, src.SecretKeyRef.Name, err)
		}
		return string(s.Data[src.SecretKeyRef.Key]), nil
	case src.ConfigMapKeyRef != nil:
		cm := &corev1.ConfigMap{}
		if err := w.agent.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: src.ConfigMapKeyRef.Name}, cm); err != nil {
			if ptr.Deref(src.ConfigMapKeyRef.Optional, false) {
				return "", nil
			}
			return "", fmt.Errorf("env %s: configmap %q: %w", e.Name, src.ConfigMapKeyRef.Name, err)
		}
		return cm.Data[src.ConfigMapKeyRef.Key], nil
	}
	return "", nil
}

func (w *podWorker) envFromData(ctx context.Context, from corev1.EnvFromSource) (map[string]string, error) {
	data := map[string]string{}
	ns := w.pod.Namespace
	switch {
	case from.SecretRef != nil:
		s := &corev1.Secret{}
		if err := w.agent.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: from.SecretRef.Name}, s); err != nil {
			if ptr.Deref(from.SecretRef.Optional, false) {
				return data, nil
			}
			return nil, fmt.Errorf("envFrom: secret %q: %w", from.SecretRef.Name, err)
		}
		for k, v := range s.Data {
			data[k] = string(v)
		}
	case from.ConfigMapRef != nil:
		cm := &corev1.ConfigMap{}
		if err := w.agent.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: from.ConfigMapRef.Name}, cm); err != nil {
			if ptr.Deref(from.ConfigMapRef.Optional, false) {
				return data, nil
			}
			return nil, fmt.Errorf("envFrom: configmap %q: %w", from.ConfigMapRef.Name, err)
		}
		for k, v := range cm.Data {
			data[k] = v
		}
	}
	return data, nil
}
