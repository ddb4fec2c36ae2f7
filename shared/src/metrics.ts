// The process's metrics (prom-client), served to the deployment's own callers at
// /internal/metrics behind the internal credential. Labels stay bounded: names of
// collections and commands, never ids.
import type { MongoClient } from 'mongodb';
import { Counter, Registry } from 'prom-client';

export const metrics = new Registry();

const storeCommands = new Counter({
  name: 'store_commands_total',
  help: 'Commands sent to the store (round trips), by collection and command',
  labelNames: ['collection', 'command'] as const,
  registers: [metrics],
});

/** Counts every command the client sends (the client must be made with `monitorCommands: true`). */
export function countStoreCommands(client: MongoClient): void {
  client.on('commandStarted', (e) => {
    const target = e.command[e.commandName];
    storeCommands.inc({ command: e.commandName, collection: typeof target === 'string' ? target : '' });
  });
}
