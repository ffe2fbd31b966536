// The benches run the compiled service (dist/), as `npm start` and docker-compose do.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

export const distUrl = (file) => new URL(`../../dist/${file}`, import.meta.url);
export const distPath = (file) => fileURLToPath(distUrl(file));

/** Exits with a message unless `npm run build` has finished (it touches dist/.built last). */
export function requireBuilt() {
  if (!fs.existsSync(distPath('.built')) || !fs.existsSync(distPath('service/worker-main.js'))) {
    console.error('dist/ is missing or half-built (no dist/.built): run `npm run build` first');
    process.exit(1);
  }
}

/** A compiled module's exports (dist is CommonJS: they arrive as the default export). */
export async function importDist(file) {
  return (await import(distUrl(file).href)).default;
}
