// The local store's FerretDB runs with the Go garbage collector settings of
// FERRETDB_GO_GC, and keeps whatever the environment sets instead.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dropPostgresDatabase, FERRETDB_GO_GC, startFerretdb } from '../scripts/local-store.ts';

/** GOGC and GOMEMLIMIT as the FerretDB process got them. */
async function goGcOf(database: string, env: Record<string, string>): Promise<Record<string, string | undefined>> {
  const saved = { GOGC: process.env.GOGC, GOMEMLIMIT: process.env.GOMEMLIMIT };
  delete process.env.GOGC;
  delete process.env.GOMEMLIMIT;
  Object.assign(process.env, env);
  const dir = mkdtempSync(join(tmpdir(), 'lpm-go-gc-'));
  try {
    const store = await startFerretdb({ dataDir: dir, database });
    try {
      const environ = readFileSync(`/proc/${store.pid}/environ`, 'utf8').split('\0');
      const value = (key: string) => environ.find((v) => v.startsWith(`${key}=`))?.slice(key.length + 1);
      return { GOGC: value('GOGC'), GOMEMLIMIT: value('GOMEMLIMIT') };
    } finally {
      await store.stop();
    }
  } finally {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
    rmSync(dir, { recursive: true, force: true });
    await dropPostgresDatabase(database).catch(() => {});
  }
}

const base = `${process.env.LPM_TEST_PG_DATABASE ?? 'lpm_test'}_gogc`;

test('when the environment sets neither, then FerretDB runs with FERRETDB_GO_GC', async () => {
  expect(await goGcOf(`${base}_default`, {})).toEqual(FERRETDB_GO_GC);
  expect(FERRETDB_GO_GC).toEqual({ GOGC: '800', GOMEMLIMIT: '2GiB' });
});

test('when the environment sets GOGC or GOMEMLIMIT, then FerretDB keeps the value given', async () => {
  expect(await goGcOf(`${base}_given`, { GOGC: '150' })).toEqual({ GOGC: '150', GOMEMLIMIT: '2GiB' });
});
