import { NO_TESTS_GATE, planGates } from '../../analysis/gate-discovery/plan-gates';
import { setupPlan } from '../../analysis/setup/infer-setup';
import { MemoryWorkspace } from '../support/memory-workspace';

// Gate discovery and setup inference on texts alone: no files, no processes (gate-discovery.test.ts and
// setup-inference.test.ts run the same code over real directories).

const nothingInstalled = () => false;

describe('planGates', () => {
  it('takes the package.json scripts as the gates, in gate order', async () => {
    const files = new MemoryWorkspace({
      'package.json': JSON.stringify({ scripts: { test: 'jest', lint: 'eslint .', build: 'tsc' } }),
      'package-lock.json': '{}',
    });
    const plan = await planGates(files, []);
    expect(plan.gates.map((g) => [g.gate, g.argv.join(' ')])).toEqual([
      ['tests', 'npm test'],
      ['lint', 'npm run lint'],
      ['build', 'npm run build'],
    ]);
    expect(plan.warnings).toEqual([]);
  });

  it('prefers the contract over the repository config over the manifests', async () => {
    const files = new MemoryWorkspace({
      'package.json': JSON.stringify({ scripts: { test: 'jest', lint: 'eslint .' } }),
      '.ai-engineering-loop/verification.json': JSON.stringify({
        version: 1,
        gates: { lint: { argv: ['make', 'lint'] } },
      }),
    });
    const plan = await planGates(files, [{ gate: 'tests', argv: ['make', 'check'], timeoutSeconds: 60 }]);
    expect(plan.gates.map((g) => [g.gate, g.argv.join(' '), g.source])).toEqual([
      ['tests', 'make check', 'contract'],
      ['lint', 'make lint', 'repository-config'],
    ]);
  });

  it('warns when nothing defines a tests gate, and notes a manifest it cannot read', async () => {
    const plan = await planGates(new MemoryWorkspace({ 'pyproject.toml': '[project\nname = ' }), []);
    expect(plan.gates).toEqual([]);
    expect(plan.warnings).toEqual([NO_TESTS_GATE]);
    expect(plan.notes.some((note) => note.startsWith('pyproject.toml is not valid TOML'))).toBe(true);
  });

  it('runs go test for a go.mod', async () => {
    const plan = await planGates(new MemoryWorkspace({ 'go.mod': 'module example.com/m\n\ngo 1.22\n' }), []);
    expect(plan.gates.find((g) => g.gate === 'tests')?.argv).toEqual(['go', 'test', '-json', './...']);
  });
});

describe('setupPlan', () => {
  it('installs from the lockfile the repository has, and asks the worker which tools it has', async () => {
    const files = new MemoryWorkspace({
      'package.json': JSON.stringify({ devDependencies: { jest: '^29' } }),
      'yarn.lock': '',
    });
    const plan = await setupPlan(files, undefined, nothingInstalled);
    expect(plan.commands.map((c) => c.argv.join(' '))).toEqual([
      'corepack yarn install --frozen-lockfile --non-interactive',
    ]);
    expect(plan.outputs).toEqual(['node_modules/']);

    const asked: string[] = [];
    const uv = await setupPlan(
      new MemoryWorkspace({ 'pyproject.toml': '[project]\nname = "x"\n', 'uv.lock': '' }),
      undefined,
      (tool) => {
        asked.push(tool);
        return tool === 'uv';
      },
    );
    expect(uv.commands.map((c) => c.argv.join(' '))).toEqual(['uv sync --frozen --all-extras']);
    expect(asked).toEqual(['uv']);
  });

  it('takes the request, then the repository config, over inference', async () => {
    const texts = {
      'package.json': JSON.stringify({ dependencies: { a: '1' } }),
      '.ai-engineering-loop/verification.json': JSON.stringify({ version: 1, setup: [{ argv: ['make', 'deps'] }] }),
    };
    const fromRepo = await setupPlan(new MemoryWorkspace(texts), undefined, nothingInstalled);
    expect(fromRepo.commands.map((c) => [c.argv.join(' '), c.source])).toEqual([['make deps', 'repository-config']]);
    const fromRequest = await setupPlan(
      new MemoryWorkspace(texts),
      [{ argv: ['true'], timeoutSeconds: 5 }],
      nothingInstalled,
    );
    expect(fromRequest.commands.map((c) => [c.argv.join(' '), c.source])).toEqual([['true', 'contract']]);
    expect((await setupPlan(new MemoryWorkspace(texts), [], nothingInstalled)).commands).toEqual([]);
  });
});
