package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// schema is the subset of JSON Schema that tool specs use: object, string,
// integer, number, boolean and array types, properties, required, items,
// enum, minimum/maximum and additionalProperties:false. Keywords outside the
// subset are ignored rather than guessed at.
type schema struct {
	Type                 string             `json:"type"`
	Properties           map[string]*schema `json:"properties"`
	Required             []string           `json:"required"`
	Items                *schema            `json:"items"`
	Enum                 []any              `json:"enum"`
	Minimum              *float64           `json:"minimum"`
	Maximum              *float64           `json:"maximum"`
	AdditionalProperties *bool              `json:"additionalProperties"`
}

func parseSchema(raw json.RawMessage) (*schema, error) {
	if len(raw) == 0 {
		return &schema{Type: "object"}, nil
	}
	var s schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	if s.Type != "object" {
		return nil, errors.New("input schema: top-level type must be object")
	}
	return &s, nil
}

func (s *schema) validate(at string, v any) error {
	if s == nil {
		return nil
	}
	switch s.Type {
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: want an object, got %s", at, kind(v))
		}
		for _, name := range s.Required {
			if _, ok := obj[name]; !ok {
				return fmt.Errorf("%s: missing required field %q", at, name)
			}
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			sub, known := s.Properties[k]
			if !known {
				if s.AdditionalProperties != nil && !*s.AdditionalProperties {
					return fmt.Errorf("%s: unknown field %q (allowed: %s)", at, k, strings.Join(s.propNames(), ", "))
				}
				continue
			}
			if err := sub.validate(at+"."+k, obj[k]); err != nil {
				return err
			}
		}
	case "array":
		arr, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s: want an array, got %s", at, kind(v))
		}
		for i, e := range arr {
			if err := s.Items.validate(fmt.Sprintf("%s[%d]", at, i), e); err != nil {
				return err
			}
		}
	case "string":
		if _, ok := v.(string); !ok {
			return fmt.Errorf("%s: want a string, got %s", at, kind(v))
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("%s: want a boolean, got %s", at, kind(v))
		}
	case "integer", "number":
		n, ok := v.(json.Number)
		if !ok {
			return fmt.Errorf("%s: want a %s, got %s", at, s.Type, kind(v))
		}
		f, err := n.Float64()
		if err != nil {
			return fmt.Errorf("%s: %v", at, err)
		}
		if s.Type == "integer" {
			if _, err := n.Int64(); err != nil {
				return fmt.Errorf("%s: want an integer, got %s", at, n)
			}
		}
		if s.Minimum != nil && f < *s.Minimum {
			return fmt.Errorf("%s: %s is below the minimum %v", at, n, *s.Minimum)
		}
		if s.Maximum != nil && f > *s.Maximum {
			return fmt.Errorf("%s: %s is above the maximum %v", at, n, *s.Maximum)
		}
	}
	if len(s.Enum) > 0 {
		for _, e := range s.Enum {
			if fmt.Sprint(e) == fmt.Sprint(v) {
				return nil
			}
		}
		return fmt.Errorf("%s: %v is not one of %v", at, v, s.Enum)
	}
	return nil
}

func (s *schema) propNames() []string {
	names := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}
