import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { CliError } from './errors';

// Where the API is and which key to send: environment first, then the config file, then defaults.
//
//   ENGINEERING_LOOP_URL / ENGINEERING_LOOP_API_KEY
//   $XDG_CONFIG_HOME/engineering-loop/config.json (default ~/.config/…): { "url": …, "apiKey": … }
//
// The default URL is the service's default listen address (config/service-config.ts: API_HOST, API_PORT).

export const DEFAULT_URL = 'http://127.0.0.1:3000';
export const URL_VARIABLE = 'ENGINEERING_LOOP_URL';
export const KEY_VARIABLE = 'ENGINEERING_LOOP_API_KEY';

export type Source = 'environment' | 'config file' | 'default';

export interface CliConfig {
  url: string;
  /** null when neither the environment nor the config file has one. */
  apiKey: string | null;
  configFile: string;
  sources: { url: Source; apiKey: Source | null };
}

const configFileSchema = z.strictObject({
  url: z.string().optional(),
  apiKey: z.string().trim().min(1, 'must not be empty').optional(),
});
type ConfigFile = z.infer<typeof configFileSchema>;

/** $XDG_CONFIG_HOME/engineering-loop/config.json; XDG says to ignore a relative XDG_CONFIG_HOME. */
export function configFilePath(env: NodeJS.ProcessEnv): string {
  const xdg = env.XDG_CONFIG_HOME?.trim();
  const base = xdg && path.isAbsolute(xdg) ? xdg : path.join(env.HOME?.trim() || os.homedir(), '.config');
  return path.join(base, 'engineering-loop', 'config.json');
}

type ReadFile = (file: string) => string;
const readUtf8: ReadFile = (file) => fs.readFileSync(file, 'utf8');

/** Resolves the configuration. The file is read only when the environment leaves something unset. */
export function resolveConfig(env: NodeJS.ProcessEnv, readFile: ReadFile = readUtf8): CliConfig {
  const configFile = configFilePath(env);
  const envUrl = nonEmpty(env[URL_VARIABLE]);
  const envKey = nonEmpty(env[KEY_VARIABLE]);
  const file = envUrl && envKey ? {} : readConfigFile(configFile, readFile);

  const url = envUrl ?? file.url ?? DEFAULT_URL;
  const urlSource: Source = envUrl ? 'environment' : file.url ? 'config file' : 'default';
  const apiKey = envKey ?? file.apiKey ?? null;
  return {
    url: normaliseUrl(url, urlSource === 'environment' ? URL_VARIABLE : `"url" in ${configFile}`),
    apiKey,
    configFile,
    sources: { url: urlSource, apiKey: envKey ? 'environment' : file.apiKey ? 'config file' : null },
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

function readConfigFile(file: string, readFile: ReadFile): ConfigFile {
  let text: string;
  try {
    text = readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new CliError(`cannot read the config file ${file}: ${(error as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new CliError(`the config file ${file} is not valid JSON: ${(error as Error).message}`);
  }
  const parsed = configFileSchema.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.length ? i.path.join('.') : 'config'}: ${i.message}`);
    throw new CliError(
      `the config file ${file} is invalid: ${problems.join('; ')}`,
      'it holds { "url": "http://host:port", "apiKey": "elk_…" }, both optional',
    );
  }
  return parsed.data;
}

/** An http(s) base URL without a trailing slash; `where` names the setting in the error. */
function normaliseUrl(value: string, where: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new CliError(`${where} is not a URL: ${JSON.stringify(value)}`, `e.g. ${DEFAULT_URL}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new CliError(`${where} must be an http:// or https:// URL (got ${JSON.stringify(value)})`);
  }
  if (url.search || url.hash)
    throw new CliError(`${where} must not have a query or fragment (got ${JSON.stringify(value)})`);
  return url.toString().replace(/\/+$/, '');
}

/** The API key, or a clear error saying where to put one. */
export function requireApiKey(config: CliConfig): string {
  if (config.apiKey) return config.apiKey;
  throw new CliError(
    'no API key configured',
    `set ${KEY_VARIABLE}, or "apiKey" in ${config.configFile} (npm start prints the first admin key; more with npm run admin -- create-key)`,
  );
}
