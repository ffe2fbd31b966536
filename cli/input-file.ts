import fs from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { CliError } from './errors';

// Request bodies from files: JSON (.json) or YAML (.yaml/.yml); any other name is read as JSON when
// it looks like JSON, else as YAML. The body must be an object (a mapping).

export function readObjectFile(file: string, what: string): Record<string, unknown> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EISDIR'
          ? 'it is a directory'
          : code === 'EACCES'
            ? 'permission denied'
            : (error as Error).message;
    throw new CliError(`cannot read ${what} ${file}: ${why}`);
  }
  const format = formatOf(file, text);
  let value: unknown;
  try {
    value = format === 'JSON' ? JSON.parse(text) : parseYaml(text, { prettyErrors: true });
  } catch (error) {
    throw new CliError(`${what} ${file} is not valid ${format}: ${firstLine((error as Error).message)}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new CliError(
      `${what} ${file} must hold an object (a ${format === 'JSON' ? 'JSON object' : 'YAML mapping'}), not ${describe(value)}`,
    );
  }
  return value as Record<string, unknown>;
}

function formatOf(file: string, text: string): 'JSON' | 'YAML' {
  const ext = path.extname(file).toLowerCase();
  if (ext === '.json') return 'JSON';
  if (ext === '.yaml' || ext === '.yml') return 'YAML';
  return /^\s*[[{]/.test(text) ? 'JSON' : 'YAML';
}

function describe(value: unknown): string {
  if (value === null || value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  return `a ${typeof value}`;
}

function firstLine(message: string): string {
  return message.split('\n')[0] ?? message;
}
