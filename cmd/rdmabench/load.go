package main

import (
	"os"

	"github.com/rdmabench/rdmabench/nic"

	"github.com/rdmabench/rdmabench/runner/backend/kube"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/scenarios"
)

// loadScenario is scenarios.Load and, for a kube scenario, the checks that
// need the Kubernetes API types (kube.CheckScenario: cluster.podPatch
// against the Pod API, on every endpoint's pod), so that every command
// reports them as FILE:LINE:COL problems (exit 2) before touching anything.
// A name without a path is a shipped scenario (scenarios.LoadByName).
func loadScenario(path string) (*scenarios.Scenario, error) {
	sc, err := scenarios.LoadByName(path)
	if err != nil || sc.Backend != scenarios.BackendKube {
		return sc, err
	}
	eps, err := plan.Endpoints(sc, plan.CompileOptions{HostGPUs: nic.CountGPUs})
	if err != nil {
		return nil, err
	}
	if list := kube.CheckScenario(sc, eps); len(list) > 0 {
		return nil, list
	}
	return sc, nil
}

// scenarioData is the scenario as the user wrote it: the file, or the
// shipped YAML for a scenario loaded by name from the binary.
func scenarioData(sc *scenarios.Scenario) ([]byte, error) {
	if data, ok := scenarios.ShippedData(sc.File); ok {
		return data, nil
	}
	return os.ReadFile(sc.File)
}
