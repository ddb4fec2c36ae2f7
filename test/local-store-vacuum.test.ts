// The local store's own vacuuming (local-store-vacuum.ts), on a PostgreSQL database
// of its own: where the server's autovacuum is off, tables with dead rows past the
// threshold are vacuumed, at autovacuum's pace; where it is on, nothing is done.
import pg from 'pg';
import { startVacuuming, type Vacuuming } from '../scripts/local-store-vacuum.ts';
import { waitFor } from '@lpm/test-kit/wait';

const onPostgres = process.env.LPM_TEST_PG_DATABASE ? describe : describe.skip;

onPostgres('local store vacuuming', () => {
  const database = `${process.env.LPM_TEST_PG_DATABASE}_vacuum`;
  const urlOf = (name: string) => {
    const url = new URL(process.env.LPM_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
    url.pathname = `/${name}`;
    return url.toString();
  };
  const connect = async () => {
    const client = new pg.Client({ connectionString: urlOf(database) });
    await client.connect();
    return client;
  };
  let admin: pg.Client;
  let sql: pg.Client;
  let vacuuming: Vacuuming | undefined;

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: urlOf('postgres') });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
    sql = await connect();
    await sql.query(`CREATE SCHEMA lpm_vac`);
    for (const table of ['churned', 'calm']) await sql.query(`CREATE TABLE lpm_vac.${table} (_jsonb jsonb)`);
  });

  afterAll(async () => {
    await vacuuming?.stop();
    await sql.end();
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
  });

  const stats = async (table: string) =>
    (
      await sql.query<{ dead: string; vacuums: string }>(
        `SELECT n_dead_tup AS dead, vacuum_count AS vacuums FROM pg_stat_user_tables WHERE schemaname = 'lpm_vac' AND relname = $1`,
        [table],
      )
    ).rows[0];

  test('when a table has more dead rows than the threshold and the server does not vacuum, then it is vacuumed at the pace of autovacuum and a table below it is not', async () => {
    await sql.query(`INSERT INTO lpm_vac.churned SELECT jsonb_build_object('_id', n) FROM generate_series(1, 1000) n`);
    await sql.query(`DELETE FROM lpm_vac.churned`);
    await sql.query(`INSERT INTO lpm_vac.calm SELECT jsonb_build_object('_id', n) FROM generate_series(1, 1000) n`);
    await sql.query(`DELETE FROM lpm_vac.calm WHERE (_jsonb->>'_id')::int <= 10`);
    // PostgreSQL publishes a backend's counts within a second or so.
    await waitFor(
      'the dead rows counted',
      async () => Number((await stats('churned')).dead) === 1000 && Number((await stats('calm')).dead) === 10,
    );
    const autovacuum = (await sql.query<{ autovacuum: string }>('SHOW autovacuum')).rows[0].autovacuum;

    const failures: unknown[] = [];
    const issued: string[] = [];
    const spied = async () => {
      const client = await connect();
      const query = client.query.bind(client) as (text: string, values?: unknown[]) => Promise<unknown>;
      client.query = ((text: string, values?: unknown[]) => (issued.push(text), query(text, values))) as never;
      return client;
    };
    vacuuming = await startVacuuming(spied, 100, (err) => failures.push(err));

    if (autovacuum === 'on') {
      // The server vacuums by itself: this stays out of its way.
      expect(vacuuming.active).toBe(false);
      return;
    }
    expect(vacuuming.active).toBe(true);
    await waitFor('the churned table vacuumed', async () => Number((await stats('churned')).vacuums) > 0);
    expect(Number((await stats('churned')).dead)).toBe(0);
    // 10 dead rows beside 990 live ones are under 50 + 20%: left alone.
    expect(await stats('calm')).toEqual({ dead: '10', vacuums: '0' });
    expect(failures).toEqual([]);
    // At autovacuum's pace: its cost delay set on the session before the first VACUUM.
    const paced = issued.findIndex((q) => q.includes(`set_config('vacuum_cost_delay'`));
    expect(paced).toBeGreaterThanOrEqual(0);
    expect(paced).toBeLessThan(issued.findIndex((q) => q.startsWith('VACUUM')));
  });
});
