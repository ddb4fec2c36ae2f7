// Vacuums the local store's PostgreSQL database where the server's autovacuum is
// off (as on the development and CI machines), the local store only.
//
// FerretDB writes every update as a new row version and every delete leaves the old
// one, so without vacuuming the busy tables only grow: the document locks (two rows
// inserted and deleted per document a relay drains or a writer locks) held 76,264
// dead rows beside 526 live ones after one benchmark's POST floods, the clients
// 31,930 beside 31,936, and every read of them, through the GIN indexes or not,
// walked past the dead ones. So the process that started FerretDB does what
// autovacuum would: every few seconds it vacuums each table whose dead rows pass
// autovacuum's default threshold (50 + 20% of the live ones), at autovacuum's pace
// (its cost delay, which a manual VACUUM does not take by itself). A plain VACUUM blocks
// no reads or writes; TRUNCATE false keeps it from taking the table's exclusive lock
// at the end to give the file's tail back.
import type pg from 'pg';

/** Where the server's own autovacuum would start on a table (its default threshold and scale factor). */
const DEAD_ROWS_BASE = 50;
const DEAD_ROWS_SCALE = 0.2;

export interface Vacuuming {
  /** Whether this vacuums at all (false where the server's autovacuum is on). */
  readonly active: boolean;
  /** Stops, after a pass under way. */
  stop(): Promise<void>;
}

/**
 * From now on, every `intervalMs`, vacuums the tables of the database `connect`
 * opens a client to that have dead rows past the threshold, unless the server's
 * autovacuum is on. What fails (PostgreSQL away, a table dropped meanwhile) goes to
 * `failed` and is tried again at the next interval.
 */
export async function startVacuuming(
  connect: () => Promise<pg.Client>,
  intervalMs: number,
  failed: (err: unknown) => void,
): Promise<Vacuuming> {
  const client = await connect();
  let autovacuum: string;
  try {
    autovacuum = (await client.query<{ autovacuum: string }>('SHOW autovacuum')).rows[0].autovacuum;
  } finally {
    await client.end();
  }
  if (autovacuum === 'on') return { active: false, stop: async () => {} };

  // The next pass is timed from the end of the last, so a slow VACUUM never has passes queue behind it.
  let pass: Promise<void> = Promise.resolve();
  let stopped = false;
  let timer: NodeJS.Timeout;
  const schedule = () => {
    timer = setTimeout(() => {
      pass = vacuumPass(connect, failed)
        .catch(failed)
        .finally(() => stopped || schedule());
    }, intervalMs).unref();
  };
  schedule();
  return {
    active: true,
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await pass;
    },
  };
}

async function vacuumPass(connect: () => Promise<pg.Client>, failed: (err: unknown) => void): Promise<void> {
  const client = await connect();
  try {
    // At autovacuum's pace: a manual VACUUM runs unthrottled, taking a core and the disk from the writes beside it.
    await client.query(
      `SELECT set_config('vacuum_cost_delay', current_setting('autovacuum_vacuum_cost_delay'), false)
        WHERE current_setting('autovacuum_vacuum_cost_delay') <> '-1'`,
    );
    const { rows } = await client.query<{ name: string }>(
      `SELECT format('%I.%I', schemaname, relname) AS name FROM pg_stat_user_tables
        WHERE n_dead_tup > $1::float8 + $2::float8 * n_live_tup ORDER BY n_dead_tup DESC`,
      [DEAD_ROWS_BASE, DEAD_ROWS_SCALE],
    );
    for (const { name } of rows) await client.query(`VACUUM (TRUNCATE false) ${name}`).catch(failed);
  } finally {
    await client.end();
  }
}
