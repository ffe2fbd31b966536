import type { ProjectProfile } from '../../domain/gates';
import { cargoDependsOn } from './cargo-manifest';
import { goRequires } from './go-manifest';
import { jvmServerFramework } from './jvm-manifest';
import type { RepoFacts } from './repo-facts';
import { pick } from './util';

// Profile detection: the first profile whose evidence is present, in this order.

const WEB_APP_PACKAGES = [
  'react',
  'vue',
  'svelte',
  'next',
  'nuxt',
  'vite',
  '@angular/core',
  '@sveltejs/kit',
  'solid-js',
];
const BACKEND_PACKAGES = ['express', 'fastify', 'koa', '@nestjs/core', '@hapi/hapi', 'hapi'];
const GO_HTTP_MODULES = [
  'github.com/gin-gonic/gin',
  'github.com/labstack/echo',
  'github.com/gofiber/fiber',
  'github.com/go-chi/chi',
  'github.com/gorilla/mux',
];
const PYTHON_WEB_PACKAGES = ['fastapi', 'flask', 'django'];
const RUST_HTTP_CRATES = ['axum', 'actix-web', 'rocket', 'warp'];

export function detectProfile(repo: RepoFacts): { profile: ProjectProfile; evidence: string } | null {
  if (repo.monorepo) return { profile: 'monorepo', evidence: repo.monorepo };
  const deps = repo.node?.pkg.dependencies;
  const web = WEB_APP_PACKAGES.find((d) => deps?.has(d));
  if (web) return { profile: 'web-app', evidence: `package.json depends on ${web}` };
  const backend =
    pick(
      BACKEND_PACKAGES,
      (d) => deps?.has(d),
      (d) => `package.json depends on ${d}`,
    ) ??
    pick(
      GO_HTTP_MODULES,
      (m) => repo.go !== undefined && goRequires(repo.go.mod, m),
      (m) => `go.mod requires ${m}`,
    ) ??
    pick(
      PYTHON_WEB_PACKAGES,
      (d) => repo.python?.dependencies.has(d),
      (d) => `pyproject.toml depends on ${d}`,
    ) ??
    pick(
      RUST_HTTP_CRATES,
      (c) => cargoDependsOn(repo.cargo, c),
      (c) => `Cargo.toml depends on ${c}`,
    ) ??
    jvmServer(repo);
  if (backend) return { profile: 'backend-api', evidence: backend };
  const manifest = [
    repo.node && 'package.json',
    repo.go && (repo.go.mod !== undefined ? 'go.mod' : 'go.work'),
    repo.cargo && 'Cargo.toml',
    repo.python?.manifest,
    repo.jvm?.manifest,
  ].find(Boolean);
  return manifest ? { profile: 'library', evidence: `${manifest} with no app or server framework` } : null;
}

function jvmServer(repo: RepoFacts): string | undefined {
  const framework = jvmServerFramework(repo.jvm);
  return framework && `${repo.jvm?.manifest} names ${framework}`;
}
