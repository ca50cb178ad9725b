package deploy

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// kapp's ordering annotations. An object joins change groups with
// kapp.k14s.io/change-group[.suffix] and orders itself against groups with
// kapp.k14s.io/change-rule[.suffix] = "<upsert|delete> <before|after> <upserting|deleting> <group>".
const (
	annotationChangeGroup = "kapp.k14s.io/change-group"
	annotationChangeRule  = "kapp.k14s.io/change-rule"
)

// changeRule is one parsed kapp change rule of an object.
type changeRule struct {
	// action is what the rule orders for its object: "upsert" or "delete".
	action string
	// after says the object waits for the group; otherwise the group waits for the object.
	after bool
	// groupAction is what the rule orders the group's members for: "upsert" or "delete".
	groupAction string
	group       string
}

// annotationsWithPrefix returns the values of key and key.<suffix>, in key order.
func annotationsWithPrefix(u *unstructured.Unstructured, key string) []string {
	annotations := u.GetAnnotations()
	var keys []string
	for k := range annotations {
		if k == key || strings.HasPrefix(k, key+".") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	values := make([]string, 0, len(keys))
	for _, k := range keys {
		values = append(values, annotations[k])
	}
	return values
}

// changeRules parses an object's change rules.
func changeRules(u *unstructured.Unstructured) ([]changeRule, error) {
	var rules []changeRule
	for _, text := range annotationsWithPrefix(u, annotationChangeRule) {
		f := strings.Fields(text)
		if len(f) != 4 || (f[0] != "upsert" && f[0] != "delete") || (f[1] != "before" && f[1] != "after") ||
			(f[2] != "upserting" && f[2] != "deleting") {
			return nil, fmt.Errorf("%s: annotation %s value %q is not a change rule: write \"<upsert|delete> <before|after> <upserting|deleting> <change group>\"",
				refOf(u), annotationChangeRule, text)
		}
		rules = append(rules, changeRule{action: f[0], after: f[1] == "after", groupAction: map[string]string{"upserting": "upsert", "deleting": "delete"}[f[2]], group: f[3]})
	}
	return rules, nil
}

// order arranges objects into waves for one action ("upsert" or "delete"): every object of a
// wave may go once the waves before it are done. It follows the objects' change rules for that
// action and the implicit ones: on upsert, Namespaces and CRDs come before everything else; on
// delete, after it. waits[i] lists the objects wave i must wait for, ready on upsert and gone on
// delete, before it starts, leaving out those an earlier wave waited for.
func order(objs []*unstructured.Unstructured, action string) (waves [][]int, waits [][]int, err error) {
	groups := map[string][]int{}
	for i, o := range objs {
		for _, g := range annotationsWithPrefix(o, annotationChangeGroup) {
			groups[g] = append(groups[g], i)
		}
	}
	// before[j] holds the objects that must be done before j.
	before := make([]map[int]bool, len(objs))
	for i := range before {
		before[i] = map[int]bool{}
	}
	for i, o := range objs {
		rules, err := changeRules(o)
		if err != nil {
			return nil, nil, err
		}
		for _, r := range rules {
			if r.action != action || r.groupAction != action {
				continue
			}
			for _, j := range groups[r.group] {
				switch {
				case j == i:
				case r.after:
					before[i][j] = true
				default:
					before[j][i] = true
				}
			}
		}
		for j, other := range objs {
			if rank(o) == 2 && rank(other) < 2 {
				if action == "upsert" {
					before[i][j] = true
				} else {
					before[j][i] = true
				}
			}
		}
	}
	wave := make([]int, len(objs))
	for i := range wave {
		wave[i] = -1
	}
	placed := 0
	// waited holds what an earlier wave already waited for.
	waited := map[int]bool{}
	for w := 0; placed < len(objs); w++ {
		var current, waitFor []int
		for i := range objs {
			if wave[i] >= 0 {
				continue
			}
			free := true
			for j := range before[i] {
				if wave[j] < 0 || wave[j] == w {
					free = false
					break
				}
			}
			if !free {
				continue
			}
			current = append(current, i)
			for j := range before[i] {
				if !waited[j] {
					waited[j] = true
					waitFor = append(waitFor, j)
				}
			}
		}
		if len(current) == 0 {
			return nil, nil, fmt.Errorf("the change rules of %s form a cycle: no order satisfies them", describe(objs, wave))
		}
		for _, i := range current {
			wave[i] = w
		}
		sort.Ints(waitFor)
		placed += len(current)
		waves = append(waves, current)
		waits = append(waits, waitFor)
	}
	return waves, waits, nil
}

// describe names the objects not yet placed in a wave.
func describe(objs []*unstructured.Unstructured, wave []int) string {
	var names []string
	for i, o := range objs {
		if wave[i] < 0 {
			names = append(names, refOf(o).String())
		}
	}
	return strings.Join(names, ", ")
}

// pick returns the objects at the given indexes.
func pick(objs []*unstructured.Unstructured, indexes []int) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, 0, len(indexes))
	for _, i := range indexes {
		out = append(out, objs[i])
	}
	return out
}
