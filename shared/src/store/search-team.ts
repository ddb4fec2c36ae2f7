// One team's search entries as a process holds them (search-index.ts), and how fresh
// they are.
import type { SearchTable } from './search-table.ts';

/** A team's entries and how fresh they are. */
export interface TeamEntries {
  table: SearchTable;
  /** Every slot before this one was read after it settled. */
  settledBefore: number;
  /** When the read of the whole team began. */
  builtAt: number;
  lastUsed: number;
  /** When the last completed read of the slots began. */
  syncedAt: number;
  running: { startedAt: number; done: Promise<void> } | null;
  /** A read of the slots that starts once the running one ends. */
  queued: Promise<void> | null;
  rebuilding: boolean;
  /** When this process last began to save it as the team's snapshot. */
  savedAt: number;
  saving: boolean;
}

export function entriesOf(table: SearchTable, settledBefore: number, builtAt: number, now: number): TeamEntries {
  return {
    table,
    settledBefore,
    builtAt,
    lastUsed: now,
    syncedAt: -Infinity,
    running: null,
    queued: null,
    rebuilding: false,
    savedAt: now,
    saving: false,
  };
}
