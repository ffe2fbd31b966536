import { GLOBAL_OPTIONS } from './args';
import type { Command, OptionSpec } from './command';
import { DEFAULT_URL, KEY_VARIABLE, URL_VARIABLE } from './config';
import { EXIT_CODES_HELP } from './exit-codes';

// --help texts.

export function commandHelp(command: Command<unknown>): string {
  const options = { ...command.options, ...GLOBAL_OPTIONS };
  const rows = Object.entries(options).map(([name, spec]) => [optionLabel(name, spec), spec.description] as const);
  const width = Math.max(...rows.map(([label]) => label.length));
  return [
    `usage: engineering-loop ${command.name} ${command.usage}`,
    '',
    command.summary,
    ...(command.details ? ['', command.details] : []),
    '',
    'options:',
    ...rows.map(([label, description]) => `  ${label.padEnd(width)}  ${description}`),
  ].join('\n');
}

function optionLabel(name: string, spec: OptionSpec): string {
  const long = `--${name}${spec.value ? ` ${spec.value}` : ''}`;
  return spec.short ? `-${spec.short}, ${long}` : `    ${long}`;
}

export function mainHelp(commands: Command<unknown>[]): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    'usage: engineering-loop <command> [arguments] [--json] [--help]',
    '',
    "Submit, follow and decide AI engineering loops through the service's REST API.",
    '',
    'commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'global options:',
    "  --json      print the API's raw JSON answers (one document per line) instead of text",
    '  -h, --help  show help (also: engineering-loop <command> --help)',
    '',
    'configuration (the environment wins over the file):',
    `  ${URL_VARIABLE}       the API's address (default ${DEFAULT_URL})`,
    `  ${KEY_VARIABLE}   an API key (Authorization: Bearer)`,
    '  $XDG_CONFIG_HOME/engineering-loop/config.json (default ~/.config/engineering-loop/config.json):',
    '      { "url": "http://127.0.0.1:3000", "apiKey": "elk_…" }',
    '',
    EXIT_CODES_HELP,
  ].join('\n');
}
