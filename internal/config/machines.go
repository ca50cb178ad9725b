package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Machine is the size of a node's VM.
type Machine struct {
	NumCPUs   int `json:"numCPUs"`
	MemoryMiB int `json:"memoryMiB"`
	DiskGiB   int `json:"diskGiB"`
}

// Label is a node label, as the ClusterClasses' label variables hold them.
type Label struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// sizeNames are TKG's node sizes, smallest first; nodeSizes their machines.
var (
	sizeNames = []string{"small", "medium", "large", "extra-large"}
	nodeSizes = map[string]Machine{
		"small":       {NumCPUs: 2, MemoryMiB: 4096, DiskGiB: 20},
		"medium":      {NumCPUs: 2, MemoryMiB: 8192, DiskGiB: 40},
		"large":       {NumCPUs: 4, MemoryMiB: 16384, DiskGiB: 40},
		"extra-large": {NumCPUs: 8, MemoryMiB: 32768, DiskGiB: 80},
	}
)

// machineCounts reads the control plane's and the workers' machine counts and spreads the
// workers over the plan's machine deployments as TKG does: the prod plan's md-0, md-1 and md-2
// get WORKER_MACHINE_COUNT_0, _1 and _2 when all three are set, else an even share of
// WORKER_MACHINE_COUNT, the first ones one more each for what does not divide; the dev plan's
// md-0 gets WORKER_MACHINE_COUNT_0 when it is set, else WORKER_MACHINE_COUNT.
func (k *completer) machineCounts() {
	c := k.c
	replicas := "1"
	if c.Plan == "prod" {
		replicas = "3"
	}
	c.ControlPlaneMachineCount = k.number(ControlPlaneMachineCount, k.def(ControlPlaneMachineCount, replicas), 1)
	total := k.number(WorkerMachineCount, k.def(WorkerMachineCount, replicas), 0)
	perDeployment := []string{WorkerMachineCount0, WorkerMachineCount1, WorkerMachineCount2}
	given := k.set(perDeployment...)
	switch {
	case c.Plan == "prod" && len(given) == len(perDeployment):
		c.WorkerMachineCounts = make([]int, len(perDeployment))
		for i, name := range perDeployment {
			value, _ := k.v.Get(name)
			c.WorkerMachineCounts[i] = k.number(name, value, 0)
		}
		sum := c.WorkerMachineCounts[0] + c.WorkerMachineCounts[1] + c.WorkerMachineCounts[2]
		if k.v.from[WorkerMachineCount] != "default" && total != sum {
			k.note("%s %d is not used: %s, %s and %s give the prod plan's md-0, md-1 and md-2 %d workers",
				WorkerMachineCount, total, WorkerMachineCount0, WorkerMachineCount1, WorkerMachineCount2, sum)
		}
		total = sum
	case c.Plan == "prod":
		k.unusedBy(fmt.Sprintf("the prod plan takes its machine deployments' workers from %s, %s and %s together, else spreads %s over them",
			WorkerMachineCount0, WorkerMachineCount1, WorkerMachineCount2, WorkerMachineCount), perDeployment...)
		c.WorkerMachineCounts = spread(total, len(perDeployment))
	default:
		if value, ok := k.v.Get(WorkerMachineCount0); ok {
			total = k.number(WorkerMachineCount0, value, 0)
		}
		k.unusedBy(fmt.Sprintf("the %s plan has one machine deployment, md-0", c.Plan), WorkerMachineCount1, WorkerMachineCount2)
		c.WorkerMachineCounts = []int{total}
	}
	c.WorkerMachineCount = total
	if c.Role == Workload && c.Plan == "prod" && total < len(perDeployment) {
		name := WorkerMachineCount
		if len(given) == len(perDeployment) {
			name = strings.Join(perDeployment, "+")
		}
		k.bad("invalid %s %d: prod plan requires at least 3 workers, one for each of its machine deployments md-0, md-1 and md-2", name, total)
	}
}

// isOrAre says "X is" or "X, Y are".
func isOrAre(names []string) string {
	if len(names) == 1 {
		return names[0] + " is"
	}
	return strings.Join(names, ", ") + " are"
}

// spread shares total over n machine deployments, the first ones one more each for what does
// not divide.
func spread(total, n int) []int {
	total = max(total, 0)
	counts := make([]int, n)
	for i := range counts {
		counts[i] = total / n
		if i < total%n {
			counts[i]++
		}
	}
	return counts
}

// NodeSize is one of TKG's node sizes and its machine.
type NodeSize struct {
	Name string `json:"name"`
	Machine
}

// NodeSizes are TKG's node sizes, smallest first, and the control plane's and the workers'
// machines when no size or vSphere variable is set.
func NodeSizes() (sizes []NodeSize, controlPlane, workers Machine) {
	for _, n := range sizeNames {
		sizes = append(sizes, NodeSize{Name: n, Machine: nodeSizes[n]})
	}
	return sizes, controlPlaneRole.defaults, workerRole.defaults
}

// machineRole names the variables of one node role's machine.
type machineRole struct {
	what string
	// size is the role's size variable; cpus, memory and disk its vSphere variables.
	size, cpus, memory, disk string
	defaults                 Machine
}

var (
	controlPlaneRole = machineRole{what: "control plane", size: ControlPlaneSize, defaults: Machine{NumCPUs: 2, MemoryMiB: 8192, DiskGiB: 40},
		cpus: VSphereControlPlaneNumCPUs, memory: VSphereControlPlaneMemMiB, disk: VSphereControlPlaneDiskGiB}
	workerRole = machineRole{what: "workers", size: WorkerSize, defaults: Machine{NumCPUs: 2, MemoryMiB: 4096, DiskGiB: 40},
		cpus: VSphereWorkerNumCPUs, memory: VSphereWorkerMemMiB, disk: VSphereWorkerDiskGiB}
)

// nodeSizes sizes the control plane's and the workers' VMs. As in TKG, a role's size
// (CONTROLPLANE_SIZE, WORKER_SIZE) comes first, then SIZE, then the role's VSPHERE_*
// variables, then VSPHERE_NUM_CPUS, VSPHERE_MEM_MIB and VSPHERE_DISK_GIB, then the defaults;
// no machine is smaller than the small size.
func (k *completer) nodeSizes() {
	k.sizeNames()
	k.c.ControlPlaneMachine = k.machine(controlPlaneRole)
	k.c.WorkerMachine = k.machine(workerRole)
}

// sizeNames refuses a SIZE, CONTROLPLANE_SIZE or WORKER_SIZE that names no size.
func (k *completer) sizeNames() {
	for _, name := range []string{Size, ControlPlaneSize, WorkerSize} {
		if size, ok := k.v.Get(name); ok && nodeSizes[size] == (Machine{}) {
			k.bad("invalid %s %q: node size %s is not defined, use one of %s", name, size, size, strings.Join(sizeNames, ", "))
		}
	}
}

func (k *completer) machine(r machineRole) Machine {
	for _, name := range []string{r.size, Size} {
		size, ok := k.v.Get(name)
		if m, known := nodeSizes[size]; ok && known {
			k.unusedBy(fmt.Sprintf("%s %s sizes the %s's machines", name, size, r.what), r.cpus, r.memory, r.disk)
			return m
		}
	}
	small := nodeSizes[sizeNames[0]]
	return Machine{
		NumCPUs:   k.dimension(r.cpus, VSphereNumCPUs, r.defaults.NumCPUs, small.NumCPUs),
		MemoryMiB: k.dimension(r.memory, VSphereMemMiB, r.defaults.MemoryMiB, small.MemoryMiB),
		DiskGiB:   k.dimension(r.disk, VSphereDiskGiB, r.defaults.DiskGiB, small.DiskGiB),
	}
}

// dimension reads one dimension of a role's machine from its variable, else from the
// variable of every role, else the default.
func (k *completer) dimension(name, common string, def, minimum int) int {
	from := name
	value, ok := k.v.Get(name)
	if !ok {
		if value, ok = k.v.Get(common); !ok {
			return def
		}
		from = fmt.Sprintf("%s (for %s)", common, name)
	}
	n, err := strconv.Atoi(value)
	switch {
	case err != nil:
		k.bad("invalid %s %q: use a whole number of at least %d", from, value, minimum)
	case n < minimum:
		k.bad("invalid %s %q: the minimum requirement of %s is %d", from, value, name, minimum)
	}
	return n
}

// controlPlaneNodeLabels reads CONTROL_PLANE_NODE_LABELS, "key1=value1,key2=value2".
func (k *completer) controlPlaneNodeLabels() {
	value, ok := k.v.Get(ControlPlaneNodeLabels)
	if !ok {
		return
	}
	for _, pair := range strings.Split(value, ",") {
		key, val, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok {
			k.bad("invalid %s %q: %q is not key=value: use key=value pairs separated by commas, as \"tier=control,zone=a\"", ControlPlaneNodeLabels, value, pair)
			continue
		}
		if errs := validation.IsQualifiedName(key); len(errs) > 0 {
			k.bad("invalid %s %q: label key %q: %s", ControlPlaneNodeLabels, value, key, strings.Join(errs, "; "))
			continue
		}
		if errs := validation.IsValidLabelValue(val); len(errs) > 0 {
			k.bad("invalid %s %q: label value %q: %s", ControlPlaneNodeLabels, value, val, strings.Join(errs, "; "))
			continue
		}
		if slices.ContainsFunc(k.c.ControlPlaneNodeLabels, func(l Label) bool { return l.Key == key }) {
			k.bad("invalid %s %q: label key %q is given twice", ControlPlaneNodeLabels, value, key)
			continue
		}
		k.c.ControlPlaneNodeLabels = append(k.c.ControlPlaneNodeLabels, Label{Key: key, Value: val})
	}
}
