package runner

import (
	"fmt"
	"strings"

	"github.com/rdmabench/rdmabench/runner/backend"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/runner/tools"
)

// substituter fills the placeholders of one leg repetition.
type substituter struct {
	r *strings.Replacer
}

func newSubstituter(eps map[string]backend.Endpoint, etcdURL, runID, out string) substituter {
	pairs := []string{tools.PlaceholderRun, runID, tools.PlaceholderOut, out}
	if etcdURL != "" {
		pairs = append(pairs, tools.PlaceholderEtcd, etcdURL)
	}
	for name, ep := range eps {
		pairs = append(pairs, tools.AddrPlaceholder(name), ep.Address)
	}
	return substituter{r: strings.NewReplacer(pairs...)}
}

// command returns argv and env with every placeholder filled, or an error
// naming a placeholder that is unknown or has no value here.
func (s substituter) command(pc plan.PlannedCommand) ([]string, map[string]string, error) {
	argv := make([]string, len(pc.Argv))
	for i, a := range pc.Argv {
		argv[i] = s.r.Replace(a)
		if err := leftover(argv[i]); err != nil {
			return nil, nil, fmt.Errorf("argument %q: %w", pc.Argv[i], err)
		}
	}
	var env map[string]string
	if len(pc.Env) > 0 {
		env = make(map[string]string, len(pc.Env))
		for k, v := range pc.Env {
			env[k] = s.r.Replace(v)
			if err := leftover(env[k]); err != nil {
				return nil, nil, fmt.Errorf("environment %s=%q: %w", k, v, err)
			}
		}
	}
	return argv, env, nil
}

func (s substituter) text(t string) string { return s.r.Replace(t) }

// leftover reports a ${…} the runner could not fill.
func leftover(s string) error {
	i := strings.Index(s, "${")
	if i < 0 {
		return nil
	}
	j := strings.IndexByte(s[i:], '}')
	if j < 0 {
		return nil
	}
	name := s[i : i+j+1]
	if name == tools.PlaceholderEtcd {
		return fmt.Errorf("%s used but no etcd runs (plan.needsEtcd is false)", name)
	}
	return fmt.Errorf("unknown placeholder %s (known: ${addr:ENDPOINT}, ${etcd}, ${run}, ${out})", name)
}
