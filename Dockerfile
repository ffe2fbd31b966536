# syntax=docker/dockerfile:1
#
# One image, three entrypoints (docker-compose.yml picks one per service):
#   node dist/service/api-main.js      HTTP API (default CMD; API_HOST 0.0.0.0, API_PORT 3000)
#   node dist/service/worker-main.js   Temporal worker (WORKER_ROLE: compose runs `workflows` and `activities`)
#   node dist/service/migrate-main.js  one-shot: `prisma migrate deploy`
#
# Production images carry no Temporal CLI / dev server: they always get TEMPORAL_ADDRESS and
# DATABASE_URL, so the embedded-defaults path (ARCHITECTURE.md, decision 8) is never taken.

ARG NODE_IMAGE=node:20-bookworm-slim

# ---------------------------------------------------------------------------------------------
# build: install all deps, generate the Prisma client, compile TypeScript, then drop dev deps.
# ---------------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
ENV npm_config_update_notifier=false \
    npm_config_fund=false \
    npm_config_audit=false

# npm 11 (as on developer machines): it runs only the install scripts package.json "allowScripts"
# allows. npm 10 (Node 20's bundled npm) would also run e.g. the Prisma engine download scripts.
RUN npm install -g npm@11.19.1

COPY package.json package-lock.json ./
RUN npm ci

COPY . .
# `prisma generate` needs no database, but the CLI wants DATABASE_URL set to resolve the datasource
# (without it Prisma 6.19 falls back to downloading a native engine). A placeholder is enough.
RUN DATABASE_URL=postgresql://build:build@localhost:5432/build npx prisma generate
RUN npm run build
# Fail the image build, not the container start, if an entrypoint was not compiled.
RUN test -f dist/service/api-main.js \
 && test -f dist/service/worker-main.js \
 && test -f dist/service/migrate-main.js
RUN npm prune --omit=dev

# ---------------------------------------------------------------------------------------------
# runtime: Node + git (workspaces) + python3-pip (verification commands of Python projects) + tini
# + bubblewrap (the worker confines every agent and gate command with it; docker-compose.yml says
# what the worker container needs for bwrap to create namespaces).
# ---------------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime

RUN apt-get update \
 && apt-get install -y --no-install-recommends bubblewrap ca-certificates git python3-pip tini \
 && rm -rf /var/lib/apt/lists/*

ENV NODE_ENV=production \
    API_HOST=0.0.0.0 \
    API_PORT=3000 \
    DATA_DIR=/data

WORKDIR /app
# package.json + prisma/schema.prisma mark the project root (config/project-root.ts);
# prisma.config.ts + prisma/migrations are what `prisma migrate deploy` (migrate-main) reads.
COPY --from=build /app/package.json /app/package-lock.json /app/prisma.config.ts ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/prisma ./prisma
COPY --from=build /app/dist ./dist
# The escalation inbox page is served from the source tree (api/inbox/index.html).
COPY --from=build /app/api/inbox ./api/inbox

# DATA_DIR holds the worker's git workspaces. Created here, owned by the unprivileged `node` user
# (uid 1000, shipped with the base image), so a fresh named volume mounted on it inherits the owner.
RUN mkdir -p /data && chown node:node /data
USER node

EXPOSE 3000
# tini as PID 1: forwards SIGTERM (graceful worker shutdown) and reaps the git/agent subprocesses.
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/service/api-main.js"]
