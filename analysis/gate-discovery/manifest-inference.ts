import { GATE_ORDER } from '../../domain/gates';
import { cargoInference } from './cargo-manifest';
import { goInference } from './go-manifest';
import { jvmInference } from './jvm-manifest';
import type { Layer } from './layer';
import { nodeInference } from './node-manifest';
import { pythonInference } from './python-manifest';
import type { RepoFacts } from './repo-facts';

// Layer 4: inference from manifests. With several manifests the first (in this order) defining a gate
// wins; the others are named in a note so a person can pin the choice in verification.json.

export function manifestInference(repo: RepoFacts, notes: string[]): Layer {
  const perManifest: Array<[string, Layer]> = [
    ['package.json', repo.node ? nodeInference(repo.node, notes) : {}],
    [repo.go?.workModules?.length ? 'go.work' : 'go.mod', repo.go ? goInference(repo.go) : {}],
    ['Cargo.toml', repo.cargo ? cargoInference(repo.cargo) : {}],
    [repo.python?.manifest ?? 'pyproject.toml', repo.python ? pythonInference(repo.python) : {}],
    [repo.jvm?.manifest ?? 'pom.xml', repo.jvm ? jvmInference(repo.jvm) : {}],
  ];
  const layer: Layer = {};
  for (const gate of GATE_ORDER) {
    const defining = perManifest.filter(([, l]) => l[gate]);
    if (!defining[0]) continue;
    layer[gate] = defining[0][1][gate];
    if (defining.length > 1) {
      notes.push(
        `${gate}: inferred from ${defining[0][0]}; ${defining
          .slice(1)
          .map(([m]) => m)
          .join(', ')} would also define it`,
      );
    }
  }
  return layer;
}
