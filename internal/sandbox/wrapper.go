package sandbox

import (
	"encoding/json"
	"fmt"
)

// wrapperConfig is what the wrapper sets up before it execs the command:
// the harness writes it as one JSON argument after wrapperArg, the command
// follows after "--". It carries no secret (the environment is the test
// command's, already scrubbed).
type wrapperConfig struct {
	// Writable are Landlock's writable paths.
	Writable []string `json:"writable,omitempty"`
	// Net: make a network namespace with only loopback, up.
	Net bool `json:"net,omitempty"`
	// InNS: the process was started in new user, mount and network
	// namespaces (an unprivileged user namespace): nothing to unshare,
	// and its ambient capabilities are dropped before the exec.
	InNS bool `json:"in_ns,omitempty"`
	// Masks are bind-mounted read-only over their targets; Hide are unix
	// sockets /dev/null is bind-mounted over; Binds are read-only bind
	// mounts (a module cache made reachable). All in a mount namespace of
	// the command's own, whose mounts never propagate back.
	Masks []Mask   `json:"masks,omitempty"`
	Hide  []string `json:"hide,omitempty"`
	Binds []Bind   `json:"binds,omitempty"`
	// SetID: set the supplementary groups to Groups, the gid to GID and
	// the uid to UID (0 keeps uid 0 and drops every capability).
	SetID  bool  `json:"set_id,omitempty"`
	UID    int   `json:"uid,omitempty"`
	GID    int   `json:"gid,omitempty"`
	Groups []int `json:"groups,omitempty"`
	// SetEnv: exec the command with Env (sudo resets the environment).
	SetEnv bool     `json:"set_env,omitempty"`
	Env    []string `json:"env,omitempty"`
	// Probe: set everything up, print a probeReport, exit 0 without a
	// command.
	Probe bool `json:"probe,omitempty"`
}

// Bind is a read-only bind mount of Source at Target.
type Bind struct {
	Source string `json:"source"`
	Target string `json:"target"`
}

// probeReport is a probe's answer: "" for each step that worked, else why
// it did not.
type probeReport struct {
	Mount string `json:"mount"`
	Net   string `json:"net"`
	ID    string `json:"id"`
}

// wrapperArgv is the wrapper's command line for cfg and argv.
func wrapperArgv(launcher string, cfg wrapperConfig, argv []string) []string {
	b, err := json.Marshal(cfg)
	if err != nil {
		panic(err) // plain data: cannot fail
	}
	out := []string{launcher, wrapperArg, string(b)}
	if cfg.Probe {
		return out
	}
	return append(append(out, "--"), argv...)
}

// parseWrapperArgs reads the wrapper's arguments (after wrapperArg).
func parseWrapperArgs(args []string) (wrapperConfig, []string, error) {
	var cfg wrapperConfig
	if len(args) == 0 {
		return cfg, nil, fmt.Errorf("no configuration")
	}
	if err := json.Unmarshal([]byte(args[0]), &cfg); err != nil {
		return cfg, nil, fmt.Errorf("configuration: %v", err)
	}
	if cfg.Probe {
		if len(args) != 1 {
			return cfg, nil, fmt.Errorf("a probe runs no command")
		}
		return cfg, nil, nil
	}
	if len(args) < 3 || args[1] != "--" {
		return cfg, nil, fmt.Errorf("no command")
	}
	return cfg, args[2:], nil
}
