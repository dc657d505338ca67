package failure

import (
	"bytes"
	"errors"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
)

// Bounds of what CIMachine reports: the log is untrusted, so each value is
// cut and the environment names are counted.
const (
	maxMachineValue = 80
	maxEnvNames     = 24
)

// goVersionLine is `go version` output, as setup-go and many workflows print it.
var goVersionLine = regexp.MustCompile(`^go version (go[0-9][0-9A-Za-z.+-]*) ([a-z0-9]+/[a-z0-9]+)$`)

// envName is a variable name as a step's `env:` block lists it.
var envName = regexp.MustCompile(`^  ([A-Za-z_][A-Za-z0-9_]*): `)

// CIMachine reads what a GitHub Actions job log says of the machine it ran
// on: the runner version, the operating system and runner image, the Go
// versions it printed, and the names (never the values) of the variables
// its steps set in `env:` blocks. It is what a failure that does not
// reproduce here is compared with. Logs that are not job logs give nothing;
// an unreadable log is an error.
func CIMachine(paths ...string) ([]string, error) {
	var m machine
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		err = m.read(f)
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	return m.lines(), nil
}

type machine struct {
	runner, os, image string
	goVersions        []string
	env               []string
	moreEnv           bool
}

func (m *machine) read(r io.Reader) error {
	lr := newLineReader(r)
	group, inEnv := "", false
	var osParts []string
	for {
		line, err := lr.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		s := string(bytes.TrimRight(line, " \t"))
		if name, ok := strings.CutPrefix(s, "##[group]"); ok {
			group, inEnv = name, false
			continue
		}
		if s == "##[endgroup]" {
			if group == "Operating System" && m.os == "" && len(osParts) > 0 {
				m.os = strings.Join(osParts, " ")
			}
			group, inEnv, osParts = "", false, nil
			continue
		}
		switch {
		case group == "Operating System":
			if len(osParts) < 4 {
				osParts = append(osParts, machineValue(s))
			}
		case group == "Runner Image":
			if v, ok := strings.CutPrefix(s, "Image: "); ok && m.image == "" {
				m.image = machineValue(v)
			} else if v, ok := strings.CutPrefix(s, "Version: "); ok && m.image != "" && !strings.Contains(m.image, " ") {
				m.image += " " + machineValue(v)
			}
		case strings.HasPrefix(group, "Run "):
			if s == "env:" {
				inEnv = true
			} else if inEnv {
				if sub := envName.FindStringSubmatch(s); sub != nil {
					m.addEnv(sub[1])
				} else if !strings.HasPrefix(s, "  ") {
					inEnv = false
				}
			}
		}
		if v, ok := strings.CutPrefix(s, "Current runner version: "); ok && m.runner == "" {
			m.runner = machineValue(strings.Trim(v, "'"))
		}
		if sub := goVersionLine.FindStringSubmatch(s); sub != nil {
			v := sub[1] + " " + sub[2]
			if !slices.Contains(m.goVersions, v) && len(m.goVersions) < 4 {
				m.goVersions = append(m.goVersions, machineValue(v))
			}
		}
	}
}

func (m *machine) addEnv(name string) {
	if slices.Contains(m.env, name) {
		return
	}
	if len(m.env) >= maxEnvNames {
		m.moreEnv = true
		return
	}
	m.env = append(m.env, name)
}

func (m *machine) lines() []string {
	var out []string
	add := func(label, v string) {
		if v != "" {
			out = append(out, label+": "+v)
		}
	}
	add("runner", m.runner)
	add("os", m.os)
	add("image", m.image)
	add("go", strings.Join(m.goVersions, ", "))
	if len(m.env) > 0 {
		names := strings.Join(m.env, ", ")
		if m.moreEnv {
			names += ", …"
		}
		add("env set by its steps", names)
	}
	return out
}

func machineValue(s string) string {
	if len(s) > maxMachineValue {
		return strings.ToValidUTF8(s[:maxMachineValue], "") + "…"
	}
	return s
}
