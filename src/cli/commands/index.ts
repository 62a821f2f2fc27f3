// The one table of admin commands, in the order `ladder-admin help` lists them.
import type { Command } from '../command.js';
import { accountCommands } from './accounts.js';
import { auditCommands } from './audit.js';
import { connectionCommands } from './connections.js';
import { instanceCommands } from './instances.js';
import { keyCommands } from './keys.js';
import { ladderCommands } from './ladders.js';
import { limitCommands } from './limits.js';
import { maintenanceCommands } from './maintenance.js';

export const commands: Command[] = [
  ...accountCommands,
  ...keyCommands,
  ...limitCommands,
  ...auditCommands,
  ...ladderCommands,
  ...instanceCommands,
  ...connectionCommands,
  ...maintenanceCommands,
];
