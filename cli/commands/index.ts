import type { Command } from '../command';
import { agentsCommand } from './agents';
import { decideCommand } from './decide';
import { listCommand } from './list';
import { logsCommand } from './logs';
import { mcpCommand } from './mcp';
import { showCommand } from './show';
import { submitCommand } from './submit';
import { timelineCommand } from './timeline';
import { watchCommand } from './watch';

/** Every command, in the order --help lists them. */
export const COMMANDS: Command<unknown>[] = [
  submitCommand,
  watchCommand,
  listCommand,
  showCommand,
  decideCommand,
  logsCommand,
  timelineCommand,
  agentsCommand,
  mcpCommand,
];
