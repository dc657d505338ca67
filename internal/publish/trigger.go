package publish

import (
	"errors"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// maxWorkflowBytes bounds the workflow file read for its triggers.
const maxWorkflowBytes = 512 << 10

// hasDispatchTrigger reports whether a workflow file's `on:` lists
// workflow_dispatch, in any of its three forms: a scalar (`on:
// workflow_dispatch`), a sequence (`on: [push, workflow_dispatch]`) or a
// mapping (`on: {workflow_dispatch: ...}`). A file that is not a workflow
// (no `on:`, not YAML) is an error: the caller says why it cannot dispatch.
func hasDispatchTrigger(src []byte) (bool, error) {
	if len(src) > maxWorkflowBytes {
		return false, fmt.Errorf("the workflow file is larger than %d KB", maxWorkflowBytes>>10)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return false, fmt.Errorf("the workflow file is not valid YAML: %v", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return false, errors.New("the workflow file is not a YAML mapping")
	}
	top := doc.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		// `on` is a string key in YAML 1.2; a YAML 1.1 reader would see
		// true, which GitHub does not: the key is compared as written.
		if k.Kind != yaml.ScalarNode || k.Value != "on" {
			continue
		}
		if v.Kind == yaml.AliasNode {
			v = v.Alias
		}
		switch v.Kind {
		case yaml.ScalarNode:
			return v.Value == "workflow_dispatch", nil
		case yaml.SequenceNode:
			for _, e := range v.Content {
				if e.Kind == yaml.ScalarNode && e.Value == "workflow_dispatch" {
					return true, nil
				}
			}
			return false, nil
		case yaml.MappingNode:
			for j := 0; j+1 < len(v.Content); j += 2 {
				if e := v.Content[j]; e.Kind == yaml.ScalarNode && e.Value == "workflow_dispatch" {
					return true, nil
				}
			}
			return false, nil
		}
		return false, errors.New("the workflow file's `on:` is neither an event, a list nor a mapping")
	}
	return false, errors.New("the workflow file has no `on:` key")
}
