package main

import (
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const uid = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"

func TestVolumeForBindsTheClaimOnItsNode(t *testing.T) {
	retain := corev1.PersistentVolumeReclaimRetain
	c := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "data", UID: uid},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2Gi")}},
		},
	}
	class := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "local"}, Provisioner: Name, ReclaimPolicy: &retain}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{hostnameLabel: "host-1"}}}
	pv, err := volumeFor(c, class, node, "/v/pvc-"+uid)
	if err != nil {
		t.Fatal(err)
	}
	if pv.Name != "pvc-"+uid || pv.Annotations[provisionedBy] != Name {
		t.Errorf("name %q annotations %v", pv.Name, pv.Annotations)
	}
	if ref := pv.Spec.ClaimRef; ref == nil || ref.Namespace != "ns" || ref.Name != "data" || ref.UID != uid {
		t.Errorf("claimRef %+v", pv.Spec.ClaimRef)
	}
	if got := pv.Spec.Capacity[corev1.ResourceStorage]; got.Value() != 2<<30 {
		t.Errorf("capacity %v, want 2Gi", got.String())
	}
	if pv.Spec.PersistentVolumeReclaimPolicy != retain || pv.Spec.StorageClassName != "local" {
		t.Errorf("reclaim %q class %q: want the class's", pv.Spec.PersistentVolumeReclaimPolicy, pv.Spec.StorageClassName)
	}
	if pv.Spec.Local == nil || pv.Spec.Local.Path != "/v/pvc-"+uid {
		t.Errorf("source %+v", pv.Spec.PersistentVolumeSource)
	}
	term := pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0]
	if term.Key != hostnameLabel || len(term.Values) != 1 || term.Values[0] != "host-1" {
		t.Errorf("node affinity %+v: want the node's hostname label", term)
	}
	node.Labels = nil
	if _, err := volumeFor(c, class, node, "/v"); err == nil {
		t.Error("a node without its hostname label: no error")
	}
}

func TestRootIsPrivateAndNamesAreChecked(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("needs root (the provisioner's directories are root's)")
	}
	base := t.TempDir()
	open := filepath.Join(base, "open")
	if err := os.Mkdir(open, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := openRoot(open); err == nil {
		t.Error("a directory others may enter was taken")
	}
	if err := os.Symlink(base, filepath.Join(base, "link")); err != nil {
		t.Fatal(err)
	}
	if _, err := openRoot(filepath.Join(base, "link")); err == nil {
		t.Error("a symlink was taken as the root")
	}
	r, err := openRoot(filepath.Join(base, "pv"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := openRoot(filepath.Join(base, "link", "pv")); err != nil {
		t.Fatalf("the same root through a symlinked parent: %v", err)
	}
	if fi, _ := os.Stat(r.dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("root mode %v, want 0700", fi.Mode().Perm())
	}
	for _, bad := range []string{"../x", "pvc-" + uid + "/..", "pvc-x"} {
		if _, err := r.make(bad); err == nil {
			t.Errorf("make(%q): no error", bad)
		}
		if err := r.remove(bad); err == nil {
			t.Errorf("remove(%q): no error", bad)
		}
	}
	path, err := r.make("pvc-" + uid)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o777 {
		t.Errorf("volume mode %v, want 0777 (as an emptyDir)", fi.Mode().Perm())
	}
	// What a pod leaves goes with the volume; a symlink out is not followed.
	outside := filepath.Join(base, "keep")
	if err := os.WriteFile(outside, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(base, filepath.Join(path, "out")); err != nil {
		t.Fatal(err)
	}
	if err := r.remove("pvc-" + uid); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Errorf("volume directory still there: %v", err)
	}
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("a file the symlink pointed at was removed: %v", err)
	}
}

func TestUnsupportedClaims(t *testing.T) {
	block := corev1.PersistentVolumeBlock
	for want, spec := range map[string]corev1.PersistentVolumeClaimSpec{
		"":                 {},
		"volumeMode Block": {VolumeMode: &block},
		"a selector":       {Selector: &metav1.LabelSelector{}},
		"a data source":    {DataSource: &corev1.TypedLocalObjectReference{Name: "snap"}},
	} {
		if got := unsupported(&corev1.PersistentVolumeClaim{Spec: spec}); got != want {
			t.Errorf("%+v: %q, want %q", spec, got, want)
		}
	}
}
