package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

const (
	// selectedNode is where the scheduler puts a WaitForFirstConsumer
	// claim's node once it has placed the claim's first pod.
	selectedNode = "volume.kubernetes.io/selected-node"
	// provisionedBy marks the volumes this provisioner made (and so may delete).
	provisionedBy = "pv.kubernetes.io/provisioned-by"
	hostnameLabel = "kubernetes.io/hostname"
)

// volumeName is a claim's volume's name, as external provisioners name
// them; it is also the directory's name, so it is checked before use.
var volumeName = regexp.MustCompile(`^pvc-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

type provisioner struct {
	cs   kubernetes.Interface
	root *root
}

// pass provisions every claim that waits for this provisioner and deletes
// every volume of its whose claim is gone.
func (p *provisioner) pass(ctx context.Context) error {
	classes, err := p.cs.StorageV1().StorageClasses().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	ours := map[string]*storagev1.StorageClass{}
	for i := range classes.Items {
		if c := &classes.Items[i]; c.Provisioner == Name {
			ours[c.Name] = c
		}
	}
	claims, err := p.cs.CoreV1().PersistentVolumeClaims("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	var errs []error
	for i := range claims.Items {
		c := &claims.Items[i]
		if c.Spec.VolumeName != "" || c.Spec.StorageClassName == nil || c.DeletionTimestamp != nil {
			continue
		}
		if class := ours[*c.Spec.StorageClassName]; class != nil {
			if why := unsupported(c); why != "" {
				errs = append(errs, fmt.Errorf("claim %s/%s: %s: not provisioned", c.Namespace, c.Name, why))
				continue
			}
			errs = append(errs, p.provision(ctx, c, class))
		}
	}
	volumes, err := p.cs.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for i := range volumes.Items {
		errs = append(errs, p.reclaim(ctx, &volumes.Items[i]))
	}
	return errors.Join(errs...)
}

// unsupported says what of a claim a directory cannot give: a block
// device, a selector over existing volumes, a data source to copy.
func unsupported(c *corev1.PersistentVolumeClaim) string {
	switch {
	case c.Spec.VolumeMode != nil && *c.Spec.VolumeMode == corev1.PersistentVolumeBlock:
		return "volumeMode Block"
	case c.Spec.Selector != nil:
		return "a selector"
	case c.Spec.DataSource != nil || c.Spec.DataSourceRef != nil:
		return "a data source"
	}
	return ""
}

// provision makes a claim's directory and volume once the scheduler has
// chosen its node.
func (p *provisioner) provision(ctx context.Context, c *corev1.PersistentVolumeClaim, class *storagev1.StorageClass) error {
	nodeName := c.Annotations[selectedNode]
	if nodeName == "" {
		return nil // not placed yet
	}
	name := "pvc-" + string(c.UID)
	if _, err := p.cs.CoreV1().PersistentVolumes().Get(ctx, name, metav1.GetOptions{}); err == nil {
		return nil // made; the volume controller binds it
	} else if !apierrors.IsNotFound(err) {
		return err
	}
	node, err := p.cs.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("claim %s/%s: its node: %w", c.Namespace, c.Name, err)
	}
	path, err := p.root.make(name)
	if err != nil {
		return fmt.Errorf("claim %s/%s: %w", c.Namespace, c.Name, err)
	}
	pv, err := volumeFor(c, class, node, path)
	if err != nil {
		return err
	}
	if _, err := p.cs.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("claim %s/%s: create its volume: %w", c.Namespace, c.Name, err)
	}
	log.Printf("provisioned %s for %s/%s on %s", name, c.Namespace, c.Name, nodeName)
	return nil
}

// volumeFor is the local volume that answers claim c on node at path,
// bound to the claim from the start.
func volumeFor(c *corev1.PersistentVolumeClaim, class *storagev1.StorageClass, node *corev1.Node, path string) (*corev1.PersistentVolume, error) {
	size, ok := c.Spec.Resources.Requests[corev1.ResourceStorage]
	if !ok {
		return nil, fmt.Errorf("claim %s/%s asks for no storage size", c.Namespace, c.Name)
	}
	host := node.Labels[hostnameLabel]
	if host == "" {
		return nil, fmt.Errorf("node %s has no %s label", node.Name, hostnameLabel)
	}
	reclaim := corev1.PersistentVolumeReclaimDelete
	if class.ReclaimPolicy != nil {
		reclaim = *class.ReclaimPolicy
	}
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pvc-" + string(c.UID), Annotations: map[string]string{provisionedBy: Name}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
			AccessModes:                   c.Spec.AccessModes,
			PersistentVolumeReclaimPolicy: reclaim,
			StorageClassName:              class.Name,
			VolumeMode:                    c.Spec.VolumeMode,
			ClaimRef:                      &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: c.Namespace, Name: c.Name, UID: c.UID},
			PersistentVolumeSource:        corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: path}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: hostnameLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{host}}},
			}}}},
		},
	}, nil
}

// reclaim deletes a volume of this provisioner's, and its directory, once
// its claim is gone (Released) under the Delete policy.
func (p *provisioner) reclaim(ctx context.Context, pv *corev1.PersistentVolume) error {
	if pv.Annotations[provisionedBy] != Name || pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete {
		return nil
	}
	if pv.Status.Phase != corev1.VolumeReleased && pv.Status.Phase != corev1.VolumeFailed {
		return nil
	}
	if err := p.root.remove(pv.Name); err != nil {
		return fmt.Errorf("volume %s: %w", pv.Name, err)
	}
	err := p.cs.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pv.UID}})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("volume %s: delete: %w", pv.Name, err)
	}
	log.Printf("deleted %s", pv.Name)
	return nil
}

// root is the directory the volumes' directories live in: root's alone,
// so nobody else can put a name in it for the provisioner to follow, and
// held open (os.Root), so every later step resolves inside it.
type root struct {
	dir string
	fs  *os.Root
}

// openRoot makes dir (mode 0700) or takes it as it is if it is already a
// real directory of root's that nobody else can enter.
func openRoot(dir string) (*root, error) {
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("%s: want an absolute path", dir)
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, err
	}
	if fi, err := os.Lstat(dir); err != nil {
		return nil, err
	} else if fi.Mode()&os.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s: a symlink", dir)
	}
	fs, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	// What was opened, not what the name points at now.
	fi, err := fs.Stat(".")
	if err == nil {
		err = private(fi)
	}
	if err != nil {
		fs.Close()
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return &root{dir: dir, fs: fs}, nil
}

// private says whether fi is a directory of root's that only root can enter.
func private(fi os.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return errors.New("not a directory")
	case !ok || st.Uid != 0:
		return errors.New("not root's")
	case fi.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("mode %v: others may enter", fi.Mode().Perm())
	}
	return nil
}

// make creates a volume's directory, open to every user inside the pods
// (as an emptyDir is: the image's server runs as its own user), and
// returns its path. A directory left by a pass that failed before its
// volume was created is taken as it is.
func (r *root) make(name string) (string, error) {
	if !volumeName.MatchString(name) {
		return "", fmt.Errorf("%q is not a volume name of this provisioner's", name)
	}
	if err := r.fs.Mkdir(name, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", err
	}
	if fi, err := r.fs.Lstat(name); err != nil {
		return "", err
	} else if !fi.IsDir() {
		return "", fmt.Errorf("%s: not a directory", name)
	}
	// After the mkdir: the umask does not narrow a chmod.
	return filepath.Join(r.dir, name), r.fs.Chmod(name, 0o777)
}

// remove deletes a volume's directory and all the pods left in it
// (RemoveAll does not follow the symlinks a pod may have made there).
func (r *root) remove(name string) error {
	if !volumeName.MatchString(name) {
		return fmt.Errorf("%q is not a volume name of this provisioner's", name)
	}
	return r.fs.RemoveAll(name)
}
