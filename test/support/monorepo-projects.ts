import { execFileSync } from 'node:child_process';
import { cachedLockfile, ITOA_VERSION, PNPM_VERSION, pnpmLockfile, type RealProject } from './real-projects';

// Small but real monorepos, one per workspace shape (issue "Real repositories, round 2", item 4): two
// packages, one depending on the other, with real dependencies from the registries. The bug is in the
// package depended on, and the test it fails is in the dependent: a change to one package is proven by
// another package's test, which every package's tests running is there to catch. Both packages have a
// test of the same title, so only a name qualified by package says which one an acceptance criterion means.
// Lockfiles are resolved on the host once and cached, as in real-projects.ts.

export type MonorepoShape = 'npm-workspaces' | 'pnpm-workspace' | 'go-work' | 'cargo-workspace';

export interface MonorepoProject extends Omit<RealProject, 'ecosystem' | 'testsDetail'> {
  ecosystem: MonorepoShape;
  /** Where each inferred gate comes from, and its argv (gate → [source, argv]). */
  gates: Record<string, [string, string[]]>;
  /** What the tests gate's detail says about why. */
  testsDetail: string;
  /** Passed tests the tests gate reports once fixed, by name (every package's). */
  passedTestNames: string[];
}

// ---------------------------------------------------------------- Node: two packages, jest -------------

const JEST = '29.7.0';

/** `@shop/money` (the bug: a percentage divided by 10) and `@shop/cart`, which sums prices through it. */
function nodeSources(): { files: Record<string, string>; fix: Record<string, string> } {
  const discount = (divisor: number) =>
    `/** The price after a discount of \`percent\` per cent, in cents. */\nexports.discounted = (cents, percent) => cents - Math.round((cents * percent) / ${divisor});\n`;
  return {
    files: {
      'packages/money/src/index.js': discount(10),
      'packages/money/test/money.test.js': [
        "const { discounted } = require('../src/index');",
        "describe('discounted', () => {",
        "  test('keeps the price without a discount', () => expect(discounted(1999, 0)).toBe(1999));",
        '});',
        '',
      ].join('\n'),
      'packages/cart/src/cart.js': [
        "const { discounted } = require('@shop/money');",
        '',
        'exports.total = (prices, percent) => discounted(prices.reduce((a, b) => a + b, 0), percent);',
        '',
      ].join('\n'),
      'packages/cart/test/cart.test.js': [
        "const { total } = require('../src/cart');",
        "describe('total', () => {",
        "  test('keeps the price without a discount', () => expect(total([500, 250], 0)).toBe(750));",
        "  test('takes the discount off', () => expect(total([500, 500], 10)).toBe(900));",
        '});',
        '',
      ].join('\n'),
    },
    fix: { 'packages/money/src/index.js': discount(100) },
  };
}

const NODE_PASSED = [
  'packages/cart/test/cart.test.js > total > keeps the price without a discount',
  'packages/cart/test/cart.test.js > total > takes the discount off',
  'packages/money/test/money.test.js > discounted > keeps the price without a discount',
];

const json = (value: object) => `${JSON.stringify(value, null, 2)}\n`;

/** npm workspaces, jest hoisted to the root, `@shop/cart` depending on `@shop/money` by version. */
export function npmWorkspacesProject(): MonorepoProject {
  const manifests = {
    'package.json': json({
      name: 'shop',
      private: true,
      workspaces: ['packages/*'],
      devDependencies: { jest: JEST },
    }),
    'packages/money/package.json': json({
      name: '@shop/money',
      version: '1.0.0',
      main: 'src/index.js',
      scripts: { test: 'jest' },
    }),
    'packages/cart/package.json': json({
      name: '@shop/cart',
      version: '1.0.0',
      scripts: { test: 'jest' },
      dependencies: { '@shop/money': '1.0.0' },
    }),
  };
  const { files, fix } = nodeSources();
  return {
    ecosystem: 'npm-workspaces',
    files: {
      ...manifests,
      'package-lock.json': cachedLockfile('npm-workspaces', manifests, 'package-lock.json', (dir) =>
        execFileSync('npm', ['install', '--package-lock-only', '--no-audit', '--no-fund'], {
          cwd: dir,
          stdio: 'pipe',
          timeout: 240_000,
        }),
      ),
      ...files,
    },
    fix,
    testName: 'packages/cart/test/cart.test.js > total > takes the discount off',
    reportedTestName: 'packages/cart/test/cart.test.js > total > takes the discount off',
    testsArgv: ['npm', 'test', '--workspaces', '--if-present'],
    testsDetail:
      'monorepo profile default: npm workspaces (package.json workspaces), scripts.test in 2 of 2 workspaces',
    setupArgv: [['npm', 'ci', '--no-audit', '--no-fund']],
    gates: { tests: ['profile-default', ['npm', 'test', '--workspaces', '--if-present']] },
    passedTests: 3,
    passedTestNames: NODE_PASSED,
  };
}

/** pnpm workspace (pnpm-workspace.yaml), jest in each package, `@shop/money` as `workspace:*`. */
export function pnpmWorkspaceProject(): MonorepoProject {
  const manifests = {
    'package.json': json({ name: 'shop', private: true, packageManager: `pnpm@${PNPM_VERSION}` }),
    'pnpm-workspace.yaml': 'packages:\n  - "packages/*"\n',
    'packages/money/package.json': json({
      name: '@shop/money',
      version: '1.0.0',
      main: 'src/index.js',
      scripts: { test: 'jest' },
      devDependencies: { jest: JEST },
    }),
    'packages/cart/package.json': json({
      name: '@shop/cart',
      version: '1.0.0',
      scripts: { test: 'jest' },
      dependencies: { '@shop/money': 'workspace:*' },
      devDependencies: { jest: JEST },
    }),
  };
  const { files, fix } = nodeSources();
  return {
    ecosystem: 'pnpm-workspace',
    files: {
      ...manifests,
      'pnpm-lock.yaml': pnpmLockfile('pnpm-workspace', manifests),
      ...files,
    },
    fix,
    testName: 'packages/cart/test/cart.test.js > total > takes the discount off',
    reportedTestName: 'packages/cart/test/cart.test.js > total > takes the discount off',
    testsArgv: ['pnpm', '-r', '--no-bail', 'run', 'test'],
    testsDetail: 'monorepo profile default: pnpm -r (pnpm-workspace.yaml packages), scripts.test in 2 of 2 workspaces',
    setupArgv: [['corepack', 'pnpm', 'install', '--frozen-lockfile']],
    gates: { tests: ['profile-default', ['pnpm', '-r', '--no-bail', 'run', 'test']] },
    passedTests: 3,
    passedTestNames: NODE_PASSED,
  };
}

// ---------------------------------------------------------------- Go: go.work over two modules --------

/** `example.com/money` (requires github.com/google/uuid) and `example.com/cart`, which imports it through the workspace. */
export function goWorkProject(): MonorepoProject {
  const moneyMod = 'module example.com/money\n\ngo 1.22\n\nrequire github.com/google/uuid v1.6.0\n';
  const money = (divisor: number) =>
    [
      'package money',
      '',
      'import "github.com/google/uuid"',
      '',
      '// Discounted is the price after a discount of percent per cent, in cents.',
      'func Discounted(cents, percent int) int {',
      `\treturn cents - cents*percent/${divisor}`,
      '}',
      '',
      '// Receipt names a sale.',
      'func Receipt() string {',
      '\treturn "r-" + uuid.NewString()',
      '}',
      '',
    ].join('\n');
  const moneyTest = [
    'package money',
    '',
    'import "testing"',
    '',
    'func TestKeepsThePrice(t *testing.T) {',
    '\tif got := Discounted(1999, 0); got != 1999 {',
    '\t\tt.Fatalf("Discounted = %d", got)',
    '\t}',
    '}',
    '',
  ].join('\n');
  const moduleFiles = { 'go.mod': moneyMod, 'money.go': money(10), 'money_test.go': moneyTest };
  const cart = [
    'package cart',
    '',
    'import "example.com/money"',
    '',
    '// Total sums the prices, then takes the discount off.',
    'func Total(prices []int, percent int) int {',
    '\tsum := 0',
    '\tfor _, p := range prices {',
    '\t\tsum += p',
    '\t}',
    '\treturn money.Discounted(sum, percent)',
    '}',
    '',
  ].join('\n');
  const cartTest = [
    'package cart',
    '',
    'import "testing"',
    '',
    'func TestKeepsThePrice(t *testing.T) {',
    '\tif got := Total([]int{500, 250}, 0); got != 750 {',
    '\t\tt.Fatalf("Total = %d", got)',
    '\t}',
    '}',
    '',
    'func TestTakesTheDiscountOff(t *testing.T) {',
    '\tif got := Total([]int{500, 500}, 10); got != 900 {',
    '\t\tt.Fatalf("Total = %d", got)',
    '\t}',
    '}',
    '',
  ].join('\n');
  return {
    ecosystem: 'go-work',
    files: {
      // No root module: ./... from the root is refused, and the workspace is the only thing that
      // resolves example.com/money for the cart (its go.mod requires nothing).
      'go.work': 'go 1.22\n\nuse (\n\t./cart\n\t./money\n)\n',
      'cart/go.mod': 'module example.com/cart\n\ngo 1.22\n',
      'cart/cart.go': cart,
      'cart/cart_test.go': cartTest,
      'money/go.mod': moneyMod,
      'money/go.sum': cachedLockfile('go-work-money', moduleFiles, 'go.sum', (dir) =>
        execFileSync('go', ['mod', 'tidy'], { cwd: dir, stdio: 'pipe', timeout: 180_000 }),
      ),
      'money/money.go': money(10),
      'money/money_test.go': moneyTest,
    },
    fix: { 'money/money.go': money(100) },
    testName: 'example.com/cart/TestTakesTheDiscountOff',
    reportedTestName: 'example.com/cart/TestTakesTheDiscountOff',
    testsArgv: ['go', 'test', '-json', './cart/...', './money/...'],
    testsDetail: 'go.work: every package of its 2 module(s)',
    setupArgv: [['go', 'list', '-e', '-deps', '-test', './cart/...', './money/...']],
    gates: {
      tests: ['manifest-inference', ['go', 'test', '-json', './cart/...', './money/...']],
      typecheck: ['manifest-inference', ['go', 'vet', './cart/...', './money/...']],
      build: ['manifest-inference', ['go', 'build', './cart/...', './money/...']],
    },
    passedTests: 3,
    passedTestNames: [
      'example.com/cart/TestKeepsThePrice',
      'example.com/cart/TestTakesTheDiscountOff',
      'example.com/money/TestKeepsThePrice',
    ],
  };
}

// ---------------------------------------------------------------- Cargo: a virtual workspace -----------

/** crates/money (depends on itoa; its tests in tests/discount.rs) and crates/cart (depends on money by path). */
export function cargoWorkspaceProject(): MonorepoProject {
  const manifests = {
    'Cargo.toml': '[workspace]\nmembers = ["crates/money", "crates/cart"]\nresolver = "2"\n',
    'crates/money/Cargo.toml': `[package]\nname = "money"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\nitoa = "=${ITOA_VERSION}"\n`,
    'crates/cart/Cargo.toml':
      '[package]\nname = "cart"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\nmoney = { path = "../money" }\n',
    'crates/money/src/lib.rs': '',
    'crates/cart/src/lib.rs': '',
  };
  const money = (divisor: number) =>
    [
      '/// The price after a discount of `percent` per cent, in cents.',
      'pub fn discounted(cents: u64, percent: u64) -> u64 {',
      `    cents - cents * percent / ${divisor}`,
      '}',
      '',
      '/// A price as a receipt shows it.',
      'pub fn shown(cents: u64) -> String {',
      '    itoa::Buffer::new().format(cents).to_string()',
      '}',
      '',
    ].join('\n');
  const cart = [
    '/// The prices summed, then the discount taken off.',
    'pub fn total(prices: &[u64], percent: u64) -> u64 {',
    '    money::discounted(prices.iter().sum(), percent)',
    '}',
    '',
    '#[cfg(test)]',
    'mod tests {',
    '    use super::total;',
    '',
    '    #[test]',
    '    fn keeps_the_price() {',
    '        assert_eq!(total(&[500, 250], 0), 750);',
    '    }',
    '',
    '    #[test]',
    '    fn takes_the_discount_off() {',
    '        assert_eq!(total(&[500, 500], 10), 900);',
    '    }',
    '}',
    '',
  ].join('\n');
  const moneyTests = [
    '#[test]',
    'fn keeps_the_price() {',
    '    assert_eq!(money::discounted(1999, 0), 1999);',
    '    assert_eq!(money::shown(1999), "1999");',
    '}',
    '',
  ].join('\n');
  return {
    ecosystem: 'cargo-workspace',
    files: {
      'Cargo.toml': manifests['Cargo.toml'],
      'Cargo.lock': cachedLockfile('cargo-workspace', manifests, 'Cargo.lock', (dir) =>
        execFileSync('cargo', ['generate-lockfile'], { cwd: dir, stdio: 'pipe', timeout: 180_000 }),
      ),
      'crates/money/Cargo.toml': manifests['crates/money/Cargo.toml'],
      'crates/money/src/lib.rs': money(10),
      'crates/money/tests/discount.rs': moneyTests,
      'crates/cart/Cargo.toml': manifests['crates/cart/Cargo.toml'],
      'crates/cart/src/lib.rs': cart,
    },
    fix: { 'crates/money/src/lib.rs': money(100) },
    // As cargo names it in a workspace: the crate, then libtest's path.
    testName: 'cart::tests::takes_the_discount_off',
    reportedTestName: 'cart::tests::takes_the_discount_off',
    testsArgv: ['cargo', 'test', '--workspace'],
    testsDetail: 'Cargo.toml [workspace]: every member, cargo test',
    setupArgv: [['cargo', 'fetch']],
    gates: {
      tests: ['manifest-inference', ['cargo', 'test', '--workspace']],
      typecheck: ['manifest-inference', ['cargo', 'check', '--workspace']],
      build: ['manifest-inference', ['cargo', 'build', '--workspace']],
    },
    passedTests: 3,
    passedTestNames: [
      'cart::tests::keeps_the_price',
      'cart::tests::takes_the_discount_off',
      'discount::keeps_the_price',
    ],
  };
}

export const MONOREPO_PROJECTS: Record<MonorepoShape, () => MonorepoProject> = {
  'npm-workspaces': npmWorkspacesProject,
  'pnpm-workspace': pnpmWorkspaceProject,
  'go-work': goWorkProject,
  'cargo-workspace': cargoWorkspaceProject,
};
