import type { FastifyInstance } from 'fastify';

// A method a known path does not have is 405 with the methods it does have (RFC 9110 §15.5.6), not 404:
// the client learns that the URL is right and the method wrong. Fastify's router answers both with its
// not-found handler, so the paths are collected as routes are added and matched here.

/** Registers the route collector (before any route); answers the methods `url` has, [] for an unknown path. */
export function trackAllowedMethods(app: FastifyInstance): (url: string) => string[] {
  const routes: Array<{ pattern: RegExp; methods: string[] }> = [];
  app.addHook('onRoute', (route) => {
    const methods = [route.method].flat();
    routes.push({ pattern: pathPattern(route.url), methods });
  });
  return (url) => {
    const path = url.split('?')[0] ?? url;
    const methods = new Set(routes.filter((r) => r.pattern.test(path)).flatMap((r) => r.methods));
    return [...methods].sort();
  };
}

/** A route path (`/v1/loops/:id`, `/docs/static/*`) as a regular expression over request paths; like the router, a parameter may be empty. */
function pathPattern(routePath: string): RegExp {
  const source = routePath
    .split('/')
    .map((segment) =>
      segment === '*' ? '.*' : segment.startsWith(':') ? '[^/]*' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
    )
    .join('/');
  return new RegExp(`^${source}$`);
}
