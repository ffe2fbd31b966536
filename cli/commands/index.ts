import type { Command } from '../command';
import { agentsCommand } from './agents';
import { cancelCommand } from './cancel';
import { decideCommand } from './decide';
import { diffCommand } from './diff';
import { listCommand } from './list';
import { logsCommand } from './logs';
import { mcpCommand } from './mcp';
import { pauseCommand, resumeCommand } from './pause';
import { reportCommand } from './report';
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
  reportCommand,
  diffCommand,
  cancelCommand,
  pauseCommand,
  resumeCommand,
  logsCommand,
  timelineCommand,
  agentsCommand,
  mcpCommand,
];
