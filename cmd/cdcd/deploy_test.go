package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/cdcd/cdcd/connect/config"
	"github.com/cdcd/cdcd/connect/rest"
)

// k8sObject is what the manifest test reads of a Kubernetes object: no client library, only the fields the
// checks name (kubectl's client dry-run needs an API server for discovery, which the test bed has not).
type k8sObject struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Data       map[string]string `yaml:"data"`
	StringData map[string]string `yaml:"stringData"`
	Spec       struct {
		Replicas *int `yaml:"replicas"`
		Strategy struct {
			Type string `yaml:"type"`
		} `yaml:"strategy"`
		Ports []struct {
			Port       int    `yaml:"port"`
			TargetPort string `yaml:"targetPort"`
		} `yaml:"ports"`
		Template struct {
			Spec podSpec `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type podSpec struct {
	SecurityContext *securityContext `yaml:"securityContext"`
	Containers      []container      `yaml:"containers"`
	Volumes         []struct {
		Name      string `yaml:"name"`
		ConfigMap *struct {
			Name string `yaml:"name"`
		} `yaml:"configMap"`
		Secret *struct {
			SecretName string `yaml:"secretName"`
			Items      []struct {
				Key  string `yaml:"key"`
				Path string `yaml:"path"`
			} `yaml:"items"`
		} `yaml:"secret"`
		PVC *struct {
			ClaimName string `yaml:"claimName"`
		} `yaml:"persistentVolumeClaim"`
	} `yaml:"volumes"`
}

type securityContext struct {
	RunAsNonRoot           *bool `yaml:"runAsNonRoot"`
	ReadOnlyRootFilesystem *bool `yaml:"readOnlyRootFilesystem"`
}

type container struct {
	Name  string   `yaml:"name"`
	Image string   `yaml:"image"`
	Args  []string `yaml:"args"`
	Ports []struct {
		Name          string `yaml:"name"`
		ContainerPort int    `yaml:"containerPort"`
	} `yaml:"ports"`
	Env []struct {
		Name      string `yaml:"name"`
		ValueFrom *struct {
			SecretKeyRef *struct {
				Name string `yaml:"name"`
				Key  string `yaml:"key"`
			} `yaml:"secretKeyRef"`
		} `yaml:"valueFrom"`
	} `yaml:"env"`
	StartupProbe    *probe           `yaml:"startupProbe"`
	ReadinessProbe  *probe           `yaml:"readinessProbe"`
	LivenessProbe   *probe           `yaml:"livenessProbe"`
	SecurityContext *securityContext `yaml:"securityContext"`
	VolumeMounts    []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
}

type probe struct {
	HTTPGet *struct {
		Path string `yaml:"path"`
		Port any    `yaml:"port"`
	} `yaml:"httpGet"`
	Exec *struct {
		Command []string `yaml:"command"`
	} `yaml:"exec"`
}

func loadManifests(t *testing.T, file string) []k8sObject {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var objs []k8sObject
	for {
		var o k8sObject
		if err := dec.Decode(&o); errors.Is(err, io.EOF) {
			return objs
		} else if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		objs = append(objs, o)
	}
}

// TestKubernetesManifests holds each manifest under deploy/kubernetes to what cdcd needs: one replica replaced
// with Recreate (one consumer per slot, one offsets file); the cdcd container runs the image's standalone command
// on files its ConfigMap has, with a worker config cdcd accepts, the offsets on a PersistentVolumeClaim, every
// secret it reads from a Secret that has the key; a listener beyond loopback only with basic authentication;
// startup, readiness and liveness on /health (an HTTP probe on the listener's port, or `cdcd health`, which
// authenticates); non-root, read-only root.
func TestKubernetesManifests(t *testing.T) {
	files, err := filepath.Glob("deploy/kubernetes/*.yaml")
	if err != nil || len(files) < 2 {
		t.Fatalf("deploy/kubernetes: %v %v, want the standalone and sidecar manifests", files, err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			objs := loadManifests(t, file)
			byKind := map[string]map[string]k8sObject{}
			for _, o := range objs {
				if byKind[o.Kind] == nil {
					byKind[o.Kind] = map[string]k8sObject{}
				}
				byKind[o.Kind][o.Metadata.Name] = o
			}
			if len(byKind["Deployment"]) != 1 {
				t.Fatalf("want one Deployment, have %d", len(byKind["Deployment"]))
			}
			for _, d := range byKind["Deployment"] {
				checkDeployment(t, d, byKind)
			}
			for _, svc := range byKind["Service"] {
				for _, p := range svc.Spec.Ports {
					if p.Port != 8083 || p.TargetPort != "rest" {
						t.Errorf("Service %s: port %d → %s, want 8083 → rest", svc.Metadata.Name, p.Port, p.TargetPort)
					}
				}
			}
		})
	}
}

func checkDeployment(t *testing.T, d k8sObject, byKind map[string]map[string]k8sObject) {
	t.Helper()
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 || d.Spec.Strategy.Type != "Recreate" {
		t.Errorf("Deployment %s: replicas %v, strategy %q; want 1 and Recreate", d.Metadata.Name, d.Spec.Replicas, d.Spec.Strategy.Type)
	}
	pod := d.Spec.Template.Spec
	i := slices.IndexFunc(pod.Containers, func(c container) bool { return c.Name == "cdcd" })
	if i < 0 {
		t.Fatalf("Deployment %s has no cdcd container", d.Metadata.Name)
	}
	c := pod.Containers[i]
	if !strings.HasPrefix(c.Image, "cdcd:") {
		t.Errorf("image %q, want the Dockerfile's cdcd image", c.Image)
	}
	mounts := map[string]string{} // mount path → volume name
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m.Name
	}
	volume := func(mountPath string) (configMap, secret, claim string, items map[string]string) {
		for _, v := range pod.Volumes {
			if v.Name != mounts[mountPath] {
				continue
			}
			switch {
			case v.ConfigMap != nil:
				return v.ConfigMap.Name, "", "", nil
			case v.Secret != nil:
				items = map[string]string{}
				for _, it := range v.Secret.Items {
					items[it.Path] = it.Key
				}
				return "", v.Secret.SecretName, "", items
			case v.PVC != nil:
				return "", "", v.PVC.ClaimName, nil
			}
		}
		return "", "", "", nil
	}
	cmName, _, _, _ := volume("/etc/cdcd")
	cm, ok := byKind["ConfigMap"][cmName]
	if !ok {
		t.Fatalf("/etc/cdcd is not a ConfigMap of the manifest (volume %q)", mounts["/etc/cdcd"])
	}
	if len(c.Args) != 3 || c.Args[0] != "standalone" {
		t.Fatalf("args %q, want standalone WORKER CONNECTOR", c.Args)
	}
	for _, f := range c.Args[1:] {
		if dir, name := path.Split(f); dir != "/etc/cdcd/" || cm.Data[name] == "" {
			t.Errorf("args name %s, which ConfigMap %s does not hold", f, cmName)
		}
	}
	workerPath := filepath.Join(t.TempDir(), "worker.properties")
	if err := os.WriteFile(workerPath, []byte(cm.Data[path.Base(c.Args[1])]), 0o644); err != nil {
		t.Fatal(err)
	}
	file, err := config.LoadPropertiesFile(workerPath)
	if err != nil {
		t.Fatal(err)
	}
	props := config.PropertiesMap(file)
	worker, _, err := config.ParseWorker(props, config.Standalone)
	if err != nil {
		t.Fatalf("worker.properties: %v", err)
	}
	if _, _, claim, _ := volume(path.Dir(worker.OffsetStorageFile)); byKind["PersistentVolumeClaim"][claim].Kind == "" {
		t.Errorf("the offsets file %s is not on a PersistentVolumeClaim of the manifest: a restart would forget the positions", worker.OffsetStorageFile)
	}
	if creds := props[rest.CredentialsFileKey]; creds != "" {
		_, secret, _, items := volume(path.Dir(creds))
		if s := byKind["Secret"][secret]; s.StringData[items[path.Base(creds)]] == "" {
			t.Errorf("%s %s is not a key of a mounted Secret", rest.CredentialsFileKey, creds)
		}
	}

	listener, err := url.Parse(worker.Listeners[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Ports) != 1 || c.Ports[0].Name != "rest" || fmt.Sprint(c.Ports[0].ContainerPort) != listener.Port() {
		t.Errorf("ports %+v, want rest on the listener's port %s", c.Ports, listener.Port())
	}
	loopback := listener.Hostname() == "127.0.0.1" || listener.Hostname() == "localhost"
	if !loopback && !rest.AuthConfigured(props) {
		t.Errorf("the REST API listens beyond loopback (%s) without basic authentication: anyone in the cluster may change connectors", listener)
	}
	for name, p := range map[string]*probe{"startup": c.StartupProbe, "readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
		switch {
		case p == nil:
			t.Errorf("no %s probe", name)
		case p.HTTPGet != nil:
			if p.HTTPGet.Path != "/health" || p.HTTPGet.Port != "rest" || loopback {
				t.Errorf("%s probe GETs %s on port %v (listener %s), want /health on rest, beyond loopback", name, p.HTTPGet.Path, p.HTTPGet.Port, listener)
			}
			if rest.AuthConfigured(props) {
				t.Errorf("%s probe GETs /health without credentials, which the API answers 401: run /cdcd health", name)
			}
		case p.Exec != nil:
			cmd := p.Exec.Command
			if len(cmd) < 3 || cmd[0] != "/cdcd" || cmd[1] != "health" || cmd[len(cmd)-1] != c.Args[1] {
				t.Errorf("%s probe runs %q, want /cdcd health … %s", name, cmd, c.Args[1])
			}
		default:
			t.Errorf("%s probe neither GETs /health nor runs cdcd health", name)
		}
	}

	env := map[string]bool{}
	for _, e := range c.Env {
		env[e.Name] = true
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			ref := e.ValueFrom.SecretKeyRef
			if byKind["Secret"][ref.Name].StringData[ref.Key] == "" {
				t.Errorf("env %s reads Secret %s key %s, which the manifest lacks", e.Name, ref.Name, ref.Key)
			}
		}
	}
	for _, m := range regexp.MustCompile(`\$\{env:(\w+)\}`).FindAllStringSubmatch(cm.Data[path.Base(c.Args[2])], -1) {
		if !env[m[1]] {
			t.Errorf("the connector reads ${env:%s}, which the container does not set", m[1])
		}
	}
	nonRoot := func(s *securityContext) bool { return s != nil && s.RunAsNonRoot != nil && *s.RunAsNonRoot }
	if !nonRoot(c.SecurityContext) && !nonRoot(pod.SecurityContext) {
		t.Error("cdcd may run as root: set runAsNonRoot")
	}
	if c.SecurityContext == nil || c.SecurityContext.ReadOnlyRootFilesystem == nil || !*c.SecurityContext.ReadOnlyRootFilesystem {
		t.Error("cdcd's root filesystem is writable: set readOnlyRootFilesystem (it writes only its offsets volume)")
	}
}

// TestPrometheusRulesAndDashboard runs promtool (Debian's prometheus package) on the alerting rules, and on the
// Grafana dashboard's expressions written out as recording rules, with the dashboard's variables filled in; then
// the rules' unit tests (deploy/prometheus/cdcd-alerts.test.yml).
func TestPrometheusRulesAndDashboard(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("needs promtool: apt-get install prometheus")
	}
	raw, err := os.ReadFile("deploy/grafana/cdcd-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatal(err)
	}
	vars := strings.NewReplacer("$connector", ".*", "$__rate_interval", "5m")
	var rules []map[string]string
	for _, p := range dash.Panels {
		for i, tg := range p.Targets {
			rules = append(rules, map[string]string{"record": fmt.Sprintf("dashboard:%s:%d", regexp.MustCompile(`\W+`).ReplaceAllString(p.Title, "_"), i), "expr": vars.Replace(tg.Expr)})
		}
	}
	if len(rules) < 20 {
		t.Fatalf("the dashboard has %d expressions", len(rules))
	}
	asRules, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}})
	if err != nil {
		t.Fatal(err)
	}
	dashRules := filepath.Join(t.TempDir(), "dashboard-rules.yml")
	if err := os.WriteFile(dashRules, asRules, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(promtool, "check", "rules", "deploy/prometheus/cdcd-alerts.yml", dashRules).CombinedOutput()
	if err != nil {
		t.Errorf("promtool check rules: %v\n%s", err, out)
	}
	// The rules' own unit tests: given series, which alerts fire when, with which labels and annotations.
	if out, err := exec.Command(promtool, "test", "rules", "deploy/prometheus/cdcd-alerts.test.yml").CombinedOutput(); err != nil {
		t.Errorf("promtool test rules: %v\n%s", err, out)
	}
}
