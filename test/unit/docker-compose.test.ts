import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { loadConfig } from '../../config/service-config';
import { workerNodeArgs } from '../../service/worker-memory';

// No Docker engine runs where these tests run, so the production topology is checked statically:
// docker-compose.yml, the Dockerfile and the build config must agree with each other and with the app.

const ROOT = path.resolve(__dirname, '..', '..');
const read = (file: string): string => fs.readFileSync(path.join(ROOT, file), 'utf8');

type DependsOn = string[] | Record<string, { condition?: string }>;
interface Healthcheck {
  test?: string | string[];
  disable?: boolean;
}
interface Service {
  image?: string;
  expose?: Array<string | number>;
  security_opt?: string[];
  cap_add?: string[];
  privileged?: boolean;
  build?: string | { context?: string; dockerfile?: string };
  command?: string | string[];
  entrypoint?: string | string[];
  environment?: Record<string, string | number | boolean | null> | string[];
  depends_on?: DependsOn;
  healthcheck?: Healthcheck;
  ports?: Array<string | { target?: number; published?: string | number }>;
  volumes?: Array<string | { type?: string; source?: string; target?: string }>;
  container_name?: string;
  restart?: string;
  deploy?: { replicas?: number };
  stop_grace_period?: string;
  hostname?: string;
}
interface Compose {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

// Compose honours YAML merge keys (`<<: *app`); the yaml package does so only when asked.
const compose = YAML.parse(read('docker-compose.yml'), { merge: true }) as Compose;
const services = compose.services;

function service(name: string): Service {
  const s = services[name];
  if (!s) throw new Error(`docker-compose.yml has no service "${name}"`);
  return s;
}

function dependencies(s: Service): Record<string, string | undefined> {
  const deps = s.depends_on ?? {};
  if (Array.isArray(deps)) return Object.fromEntries(deps.map((d) => [d, undefined]));
  return Object.fromEntries(Object.entries(deps).map(([name, spec]) => [name, spec?.condition]));
}

function environment(s: Service): Record<string, string> {
  const env = s.environment ?? {};
  if (Array.isArray(env)) {
    return Object.fromEntries(
      env.map((entry) => {
        const i = entry.indexOf('=');
        return i < 0 ? [entry, ''] : [entry.slice(0, i), entry.slice(i + 1)];
      }),
    );
  }
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v === null ? '' : String(v)]));
}

/** A compose duration (`330s`, `5m30s`, `1h`) in seconds. */
function seconds(duration: string): number {
  const units: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600 };
  let total = 0;
  for (const [, n, unit] of duration.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)) total += Number(n) * units[unit!]!;
  return total;
}

function asList(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : value.split(/\s+/).filter(Boolean);
}

/** `${VAR:-default}` → default, `${VAR}` → '', as compose does with VAR unset. */
function interpolateDefaults(value: string): string {
  return value.replace(/\$\{[A-Za-z_][A-Za-z0-9_]*(?::?[-?]([^}]*))?\}/g, (_m, def: string | undefined) => def ?? '');
}

const ONE_SHOTS = ['temporal-schema', 'temporal-namespace', 'migrate'];
const APP_SERVICES = ['migrate', 'api', 'loop-worker', 'worker'];
/** The long-running app services: the api and the two kinds of worker (WORKER_ROLE). */
const SERVING = ['api', 'loop-worker', 'worker'];
/** The worker processes (worker-main.js), each scalable on its own: the loops, and the heavy activities. */
const WORKERS = ['loop-worker', 'worker'];
const ENTRYPOINTS = ['api-main', 'worker-main', 'migrate-main'];

describe('docker-compose.yml topology', () => {
  it('declares the production services', () => {
    expect(Object.keys(services).sort()).toEqual(
      [
        'api',
        'loop-worker',
        'migrate',
        'postgres',
        'temporal',
        'temporal-namespace',
        'temporal-schema',
        'temporal-ui',
        'worker',
      ].sort(),
    );
  });

  it('only depends on services that exist, with valid conditions, and without cycles', () => {
    const conditions = ['service_started', 'service_healthy', 'service_completed_successfully', undefined];
    for (const [name, s] of Object.entries(services)) {
      for (const [dep, condition] of Object.entries(dependencies(s))) {
        expect({ service: name, dependsOn: dep, exists: dep in services }).toEqual({
          service: name,
          dependsOn: dep,
          exists: true,
        });
        expect(conditions).toContain(condition);
      }
    }
    const visiting = new Set<string>();
    const done = new Set<string>();
    const visit = (name: string, trail: string[]): void => {
      if (done.has(name)) return;
      if (visiting.has(name)) throw new Error(`depends_on cycle: ${[...trail, name].join(' -> ')}`);
      visiting.add(name);
      for (const dep of Object.keys(dependencies(service(name)))) visit(dep, [...trail, name]);
      visiting.delete(name);
      done.add(name);
    };
    for (const name of Object.keys(services)) visit(name, []);
  });

  it('gives a healthcheck to every service another one waits on as healthy', () => {
    const waitedOn = new Set<string>();
    for (const s of Object.values(services)) {
      for (const [dep, condition] of Object.entries(dependencies(s)))
        if (condition === 'service_healthy') waitedOn.add(dep);
    }
    for (const name of ['postgres', 'temporal', 'api', ...waitedOn]) {
      const hc = service(name).healthcheck;
      expect({ service: name, test: asList(hc?.test).length > 0, disabled: hc?.disable ?? false }).toEqual({
        service: name,
        test: true,
        disabled: false,
      });
    }
  });

  it('runs the one-shot jobs once (never restarted after they complete)', () => {
    for (const name of ONE_SHOTS) {
      expect({ service: name, restart: service(name).restart ?? 'no' }).toEqual({ service: name, restart: 'no' });
    }
    for (const s of Object.values(services)) {
      for (const [dep, condition] of Object.entries(dependencies(s))) {
        if (condition === 'service_completed_successfully') expect(ONE_SHOTS).toContain(dep);
      }
    }
  });

  it('starts api and the workers only after migrations ran and postgres and Temporal are ready', () => {
    for (const name of SERVING) {
      expect(dependencies(service(name))).toEqual(
        expect.objectContaining({
          migrate: 'service_completed_successfully',
          postgres: 'service_healthy',
          temporal: 'service_healthy',
          'temporal-namespace': 'service_completed_successfully',
        }),
      );
    }
    expect(dependencies(service('migrate'))).toEqual(expect.objectContaining({ postgres: 'service_healthy' }));
    expect(dependencies(service('temporal'))).toEqual(
      expect.objectContaining({ 'temporal-schema': 'service_completed_successfully' }),
    );
  });

  it('pins every image to an explicit tag', () => {
    for (const [name, s] of Object.entries(services)) {
      expect({ service: name, hasImage: typeof s.image === 'string' }).toEqual({ service: name, hasImage: true });
      const image = interpolateDefaults(s.image ?? '');
      const lastSegment = image.split('/').pop() ?? '';
      const tag = lastSegment.includes('@') ? 'digest' : lastSegment.split(':')[1];
      expect({ service: name, image, tagged: Boolean(tag), latest: tag === 'latest' }).toEqual({
        service: name,
        image,
        tagged: true,
        latest: false,
      });
    }
  });

  it('uses one Temporal version for the server and its admin tools', () => {
    const version = (image: string | undefined): string | undefined => image?.split(':')[1]?.split('-')[0];
    const server = version(service('temporal').image);
    expect(service('temporal').image).toMatch(/^temporalio\/server:/);
    expect(service('temporal-ui').image).toMatch(/^temporalio\/ui:/);
    for (const name of ['temporal-schema', 'temporal-namespace']) {
      expect(service(name).image).toMatch(/^temporalio\/admin-tools:/);
      expect(version(service(name).image)).toBe(server);
    }
  });

  it('builds migrate, api and the workers from the Dockerfile in this repository', () => {
    for (const name of APP_SERVICES) {
      const build = service(name).build;
      const spec = typeof build === 'string' ? { context: build } : build;
      expect({ service: name, build: spec !== undefined }).toEqual({ service: name, build: true });
      const dockerfile = path.join(ROOT, spec?.context ?? '.', spec?.dockerfile ?? 'Dockerfile');
      expect(path.relative(ROOT, dockerfile)).toBe('Dockerfile');
      expect(fs.existsSync(dockerfile)).toBe(true);
    }
    // One image for all of them: same build, same tag.
    expect(new Set(APP_SERVICES.map((name) => service(name).image)).size).toBe(1);
  });

  it('starts each app service with its compiled entrypoint', () => {
    expect(asList(service('api').command)).toEqual(['node', 'dist/service/api-main.js']);
    for (const name of WORKERS)
      expect({ service: name, command: asList(service(name).command) }).toEqual({
        service: name,
        command: ['node', 'dist/service/worker-main.js'],
      });
    expect(asList(service('migrate').command)).toEqual(['node', 'dist/service/migrate-main.js']);
  });

  it('names, in each app command, the file the build emits for a service/*-main.ts entrypoint', () => {
    // tsconfig.build.json compiles <rootDir>/service/x.ts to <outDir>/service/x.js.
    const build = JSON.parse(read('tsconfig.build.json').replace(/^\s*\/\/.*$/gm, '')) as {
      compilerOptions?: { rootDir?: string; outDir?: string };
      include?: string[];
    };
    const outDir = build.compilerOptions?.outDir ?? '';
    const rootDir = build.compilerOptions?.rootDir ?? '';
    // After a build (`npm test` builds before it runs the tests) the file itself must be there too.
    const built = fs.existsSync(path.join(ROOT, outDir, '.built'));
    for (const name of APP_SERVICES) {
      const [node, script, ...rest] = asList(service(name).command);
      expect({ service: name, node, rest }).toEqual({ service: name, node: 'node', rest: [] });
      const emitted = path.normalize(script ?? '');
      expect(emitted.startsWith(`${outDir}${path.sep}`)).toBe(true);
      const source = path.join(rootDir, path.relative(outDir, emitted)).replace(/\.js$/, '.ts');
      expect({ service: name, source, exists: fs.existsSync(path.join(ROOT, source)) }).toEqual({
        service: name,
        source,
        exists: true,
      });
      expect(build.include).toContain(source.split(path.sep)[0]);
      if (built)
        expect({ service: name, emitted, exists: fs.existsSync(path.join(ROOT, emitted)) }).toEqual({
          service: name,
          emitted,
          exists: true,
        });
    }
  });

  it('configures the app for the compose network', () => {
    const postgresEnv = environment(service('postgres'));
    const pgUser = interpolateDefaults(postgresEnv.POSTGRES_USER ?? '');
    const pgPassword = interpolateDefaults(postgresEnv.POSTGRES_PASSWORD ?? '');
    const pgDb = interpolateDefaults(postgresEnv.POSTGRES_DB ?? '');
    expect(pgUser).not.toBe('');
    expect(pgDb).not.toBe('');

    for (const name of APP_SERVICES) {
      const env = environment(service(name));
      for (const key of [
        'DATABASE_URL',
        'TEMPORAL_ADDRESS',
        'TEMPORAL_NAMESPACE',
        'TEMPORAL_TASK_QUEUE',
        'DATA_DIR',
        'LLM_BASE_URL',
        'LLM_API_KEY',
        'LLM_MODEL',
      ]) {
        expect({ service: name, key, set: key in env }).toEqual({ service: name, key, set: true });
      }
      expect(env.TEMPORAL_ADDRESS).toBe('temporal:7233');
      expect(env.TEMPORAL_NAMESPACE).toBe('default');
      expect(env.TEMPORAL_TASK_QUEUE).toBe('engineering-loop');
      expect(env.DATA_DIR).toBe('/data');

      const url = new URL(interpolateDefaults(env.DATABASE_URL ?? ''));
      expect(url.protocol).toBe('postgresql:');
      expect(url.hostname).toBe('postgres');
      expect(url.port).toBe('5432');
      expect(url.pathname).toBe(`/${pgDb}`);
      expect(decodeURIComponent(url.username)).toBe(pgUser);
      expect(decodeURIComponent(url.password)).toBe(pgPassword);
      expect(new URL(interpolateDefaults(env.LLM_BASE_URL ?? '')).protocol).toMatch(/^https?:$/);
      expect(interpolateDefaults(env.LLM_MODEL ?? '')).not.toBe('');
    }

    const apiEnv = environment(service('api'));
    expect(apiEnv.API_HOST).toBe('0.0.0.0');
    expect(apiEnv.API_PORT).toBe('3000');
  });

  it('points Temporal at the shared postgres with the postgres12 plugin and its own databases', () => {
    const env = environment(service('temporal'));
    const postgresEnv = environment(service('postgres'));
    expect(env.DB).toBe('postgres12');
    expect(env.DB_PORT).toBe('5432');
    expect(env.POSTGRES_SEEDS).toBe('postgres');
    expect(env.POSTGRES_USER).toBe(postgresEnv.POSTGRES_USER);
    expect(env.POSTGRES_PWD).toBe(postgresEnv.POSTGRES_PASSWORD);
    expect(env.DBNAME).toBe('temporal');
    expect(env.VISIBILITY_DBNAME).toBe('temporal_visibility');
    expect([env.DBNAME, env.VISIBILITY_DBNAME]).not.toContain(interpolateDefaults(postgresEnv.POSTGRES_DB ?? ''));

    const schemaEnv = environment(service('temporal-schema'));
    expect(schemaEnv.POSTGRES_SEEDS).toBe('postgres');
    expect(schemaEnv.POSTGRES_USER).toBe(postgresEnv.POSTGRES_USER);
    expect(schemaEnv.SQL_PASSWORD).toBe(postgresEnv.POSTGRES_PASSWORD);
    const script = asList(service('temporal-schema').command).join('\n');
    for (const db of ['temporal', 'temporal_visibility']) {
      expect(script).toContain(`--db ${db} setup-schema`);
      expect(script).toContain(`--db ${db} update-schema`);
    }

    expect(environment(service('temporal-namespace')).TEMPORAL_ADDRESS).toBe('temporal:7233');
    expect(environment(service('temporal-namespace')).NAMESPACE).toBe('default');
  });

  it('publishes the API on 3000 and nothing of Temporal: its frontend and UI stay on the compose network', () => {
    const targets = (name: string): number[] =>
      (service(name).ports ?? []).map((p) =>
        typeof p === 'string' ? Number(p.split(':').pop()?.split('/')[0]) : Number(p.target),
      );
    expect(targets('api')).toContain(3000);
    for (const name of Object.keys(services).filter((n) => n !== 'api'))
      expect({ service: name, published: targets(name) }).toEqual({ service: name, published: [] });
    expect(service('temporal').expose?.map(String)).toContain('7233');
    expect(service('temporal-ui').expose?.map(String)).toContain('8080');
    expect(environment(service('temporal-ui')).TEMPORAL_ADDRESS).toBe('temporal:7233');
    expect(asList(service('api').healthcheck?.test).join(' ')).toContain('http://127.0.0.1:3000/healthz');
  });

  it('runs api and the workers with production policy: no local repositories, no deadline approval, no decisions by signal', () => {
    for (const name of SERVING) {
      const env = environment(service(name));
      expect({
        service: name,
        ALLOW_LOCAL_REPOSITORIES: env.ALLOW_LOCAL_REPOSITORIES,
        ALLOW_DEADLINE_APPROVE: env.ALLOW_DEADLINE_APPROVE,
      }).toEqual({
        service: name,
        ALLOW_LOCAL_REPOSITORIES: 'false',
        ALLOW_DEADLINE_APPROVE: 'false',
      });
      expect({ service: name, DECISION_SIGNAL_ACTORS: env.DECISION_SIGNAL_ACTORS }).toEqual({
        service: name,
        DECISION_SIGNAL_ACTORS: '',
      });
    }
  });

  it('splits the workers by role: loop-worker runs the loops, worker the activities (makers, gates, reviews, git)', () => {
    expect(environment(service('loop-worker')).WORKER_ROLE).toBe('workflows');
    expect(environment(service('worker')).WORKER_ROLE).toBe('activities');
    // Every process of worker-main.js has its role: none falls back to `all` (loops next to sandboxed commands).
    const workerMains = Object.keys(services).filter((name) =>
      asList(service(name).command).includes('dist/service/worker-main.js'),
    );
    expect(workerMains.sort()).toEqual([...WORKERS].sort());
  });

  it('confines worker commands with bubblewrap, lifting only what bwrap needs and adding no capability', () => {
    const worker = service('worker');
    expect(environment(worker).SANDBOX).toBe('bwrap');
    expect([...(worker.security_opt ?? [])].sort()).toEqual([
      'apparmor=unconfined',
      'seccomp=unconfined',
      'systempaths=unconfined',
    ]);
    expect(worker.cap_add ?? []).toEqual([]);
    expect(Object.values(services).some((s) => s.privileged)).toBe(false);
    // Only the worker runs commands: no other service gets the relaxations bwrap needs.
    for (const name of Object.keys(services).filter((n) => n !== 'worker')) {
      expect({
        service: name,
        security_opt: service(name).security_opt ?? [],
        cap_add: service(name).cap_add ?? [],
      }).toEqual({ service: name, security_opt: [], cap_add: [] });
    }
  });

  it('runs the loops without a sandbox or a volume: the loop worker runs no command and keeps no workspace', () => {
    const loopWorker = service('loop-worker');
    expect(loopWorker.volumes ?? []).toEqual([]);
    expect(Object.keys(environment(loopWorker)).filter((key) => key.startsWith('SANDBOX'))).toEqual([]);
  });

  it("bounds the loop worker's memory with the heap limit npm start gives it; the activities worker gets none", () => {
    expect(environment(service('loop-worker')).NODE_OPTIONS).toBe(
      workerNodeArgs('workflows', loadConfig({})).join(' '),
    );
    expect(environment(service('worker')).NODE_OPTIONS).toBeUndefined();
  });

  it('keeps both workers scalable, each with a grace period to drain', () => {
    for (const name of WORKERS) {
      const s = service(name);
      // A fixed host name would give every replica the same Temporal identity (`<pid>@<host>`).
      expect({
        service: name,
        container_name: s.container_name,
        hostname: s.hostname,
        ports: s.ports ?? [],
        expose: s.expose ?? [],
      }).toEqual({
        service: name,
        container_name: undefined,
        hostname: undefined,
        ports: [],
        expose: [],
      });
      // Docker's SIGKILL comes after the drain and the 15 s the worker then gives what it cancels (service/worker.ts).
      const drainSeconds = Number(environment(s).SHUTDOWN_GRACE_SECONDS ?? 300) + 15;
      expect({
        service: name,
        replicas: (s.deploy?.replicas ?? 0) >= 1,
        graceCoversDrain: seconds(s.stop_grace_period ?? '10s') > drainSeconds,
      }).toEqual({ service: name, replicas: true, graceCoversDrain: true });
    }
  });

  it('lets replicas of the worker run side by side on one shared workspace volume', () => {
    const worker = service('worker');
    // Replicas must share DATA_DIR: a retried activity finds the loop's workspace whichever replica runs it
    // (test/e2e/topology.e2e.test.ts runs three replicas on one directory and kills one mid-maker).
    const dataDir = environment(worker).DATA_DIR;
    const data = (worker.volumes ?? [])
      .map((v) => (typeof v === 'string' ? { source: v.split(':')[0], target: v.split(':')[1] } : v))
      .find((v) => v.target === dataDir);
    expect(data?.source).toBeDefined();
    expect(Object.keys(compose.volumes ?? {})).toContain(data?.source);
  });

  it('declares every named volume it mounts, and mounts a volume for postgres data', () => {
    const declared = Object.keys(compose.volumes ?? {});
    for (const [name, s] of Object.entries(services)) {
      for (const v of s.volumes ?? []) {
        const source = typeof v === 'string' ? v.split(':')[0] : v.source;
        const named =
          source !== undefined && !source.startsWith('.') && !source.startsWith('/') && !source.startsWith('~');
        if (named)
          expect({ service: name, volume: source, declared: declared.includes(source) }).toEqual({
            service: name,
            volume: source,
            declared: true,
          });
      }
    }
    const pgMounts = (service('postgres').volumes ?? []).map((v) =>
      typeof v === 'string' ? v.split(':')[1] : v.target,
    );
    expect(pgMounts).toContain('/var/lib/postgresql/data');
  });
});

// ---------------------------------------------------------------------------------------------
// Dockerfile
// ---------------------------------------------------------------------------------------------

interface Instruction {
  keyword: string;
  args: string;
}

/** Dockerfile instructions with line continuations joined and comments dropped. */
function parseDockerfile(text: string): Instruction[] {
  const instructions: Instruction[] = [];
  let current = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (current === '' && (line === '' || line.startsWith('#'))) continue;
    if (line.startsWith('#')) continue; // comment inside a continued instruction
    if (line.endsWith('\\')) {
      current += line.slice(0, -1) + ' ';
      continue;
    }
    current += line;
    const match = /^(\S+)\s*(.*)$/s.exec(current);
    if (match) instructions.push({ keyword: (match[1] ?? '').toUpperCase(), args: (match[2] ?? '').trim() });
    current = '';
  }
  return instructions;
}

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');
  const instructions = parseDockerfile(dockerfile);
  const all = (keyword: string): string[] => instructions.filter((i) => i.keyword === keyword).map((i) => i.args);
  const runs = all('RUN').join('\n');

  it('is a multi-stage build on node:20-bookworm-slim', () => {
    const args = Object.fromEntries(
      all('ARG').map((a) => {
        const [k, ...v] = a.split('=');
        return [k, v.join('=')];
      }),
    );
    const bases = all('FROM')
      .map((f) => f.split(/\s+/)[0] ?? '')
      .map((b) => b.replace(/^\$\{(\w+)\}$/, (_m, k: string) => args[k] ?? ''));
    expect(bases.length).toBeGreaterThanOrEqual(2);
    for (const base of bases) expect(base).toBe('node:20-bookworm-slim');
  });

  it('installs, generates, builds and prunes', () => {
    expect(runs).toMatch(/\bnpm ci\b/);
    expect(runs).toMatch(/\bnpx prisma generate\b/);
    expect(runs).toMatch(/\bnpm run build\b/);
    expect(runs).toMatch(/\bnpm prune --omit=dev\b/);
    expect(runs).toMatch(/apt-get install[^\n]*\bgit\b/);
    expect(runs).toMatch(/apt-get install[^\n]*\bpython3-pip\b/);
    // The worker's sandbox (SANDBOX=bwrap in docker-compose.yml).
    expect(runs).toMatch(/apt-get install[^\n]*\bbubblewrap\b/);
    const order = ['npm ci', 'npx prisma generate', 'npm run build', 'npm prune'].map((s) => runs.indexOf(s));
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });

  it('runs as a non-root user', () => {
    const users = all('USER');
    expect(users.length).toBeGreaterThan(0);
    expect(['root', '0', '0:0']).not.toContain(users[users.length - 1]);
  });

  it('starts the API by default and only names entrypoints that exist as service/*-main.ts', () => {
    const cmd = JSON.parse(all('CMD').pop() ?? '[]') as string[];
    expect(cmd).toEqual(['node', 'dist/service/api-main.js']);
    expect(all('EXPOSE')).toContain('3000');

    const referenced = (text: string): string[] =>
      [...text.matchAll(/dist\/service\/([\w-]+)\.js/g)].map((m) => m[1] ?? '');
    const fromDockerfile = referenced(instructions.map((i) => i.args).join('\n'));
    const fromCompose = APP_SERVICES.flatMap((name) => referenced(asList(service(name).command).join(' ')));
    for (const name of [...fromDockerfile, ...fromCompose]) expect(ENTRYPOINTS).toContain(name);
    // The build stage checks that every entrypoint was compiled.
    for (const name of ENTRYPOINTS) expect(runs).toContain(`test -f dist/service/${name}.js`);
  });

  it('ships what the runtime reads: package.json, prisma schema/migrations/config and dist', () => {
    const copies = all('COPY').join('\n');
    for (const needed of ['package.json', 'prisma.config.ts', '/app/prisma', '/app/dist', '/app/node_modules']) {
      expect(copies).toContain(needed);
    }
  });

  it('keeps build outputs and local state out of the build context', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
    for (const entry of ['node_modules', 'dist', '.data', 'prisma/generated', '.git']) expect(ignored).toContain(entry);
    for (const needed of [
      'package.json',
      'package-lock.json',
      'prisma',
      'tsconfig.json',
      'tsconfig.build.json',
      'prisma.config.ts',
    ]) {
      expect(ignored).not.toContain(needed);
    }
  });
});

describe('tsconfig.build.json', () => {
  // JSON with comments, as tsc reads it.
  const config = JSON.parse(read('tsconfig.build.json').replace(/^\s*\/\/.*$/gm, '')) as {
    extends?: string;
    compilerOptions?: { outDir?: string; rootDir?: string; noEmit?: boolean };
    include?: string[];
    exclude?: string[];
  };

  it('compiles the service sources (not the tests) from the repository root into dist/', () => {
    expect(config.extends).toBe('./tsconfig.json');
    expect(config.compilerOptions?.outDir).toBe('dist');
    expect(config.compilerOptions?.rootDir).toBe('.');
    expect(config.compilerOptions?.noEmit).not.toBe(true);
    expect(config.include).toEqual(
      expect.arrayContaining(['domain', 'config', 'telemetry', 'workflows', 'activities', 'api', 'service', 'prisma']),
    );
    expect(config.include).not.toContain('test');
    expect(config.exclude).toContain('test');
  });

  it('is what `npm run build` uses', () => {
    const pkg = JSON.parse(read('package.json')) as { scripts?: Record<string, string> };
    expect(pkg.scripts?.build).toContain('tsc -p tsconfig.build.json');
  });
});
