// The local document store for development and tests: FerretDB over the local
// PostgreSQL (or over SQLite where no PostgreSQL answers), built from the Go
// module proxy into a cache this project controls.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  cpSync,
  writeFileSync,
  rmSync,
  renameSync,
  createWriteStream,
} from 'node:fs';
import { createServer, connect } from 'node:net';
import { homedir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { FERRETDB_POSTGRES_PARAMS, installGinIndexing } from './local-store-indexes.ts';
import { startVacuuming, type Vacuuming } from './local-store-vacuum.ts';
import { SERVICES, type ServiceName } from '../shared/src/service/registry.ts';

/** The version tools/ferretdb/go.mod pins. */
const FERRETDB_VERSION = 'v1.24.0';
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export const LOCAL_STORE_PORT = 27117;
export const LOCAL_STORE_DATABASE = 'lpm_local';
export const localStoreDataDir = join(repoRoot, '.data', 'ferretdb');

// FerretDB 1.24's update and findAndModify hold one of its PostgreSQL connections
// (50 by default) while they wait for a second, so as many concurrent updates as
// the pool has connections wedge the whole store (docs/ferretdb.md). Every process that talks
// to the local store therefore keeps a bounded number of connections to it, and the
// system's processes together stay under 50 with room for an operator CLI.
export const LOCAL_STORE_CLIENT_CONNECTIONS = 6;

/**
 * The connections of each process `npm start` runs on the local store: where the
 * store work is (per client written, the clients service makes up to four operations and
 * the webhooks service four to five, each holding a connection for its whole round
 * trip), not six each (each service's share is in the service registry). 41 together,
 * and 47 with a CLI beside them.
 */
export const LOCAL_STORE_CONNECTIONS: Record<'gateway' | ServiceName, number> = {
  gateway: 4,
  ...(Object.fromEntries(SERVICES.map((s) => [s.name, s.storeConnections])) as Record<ServiceName, number>),
};

/** The URL a process gives its driver for a local store on this port. */
export function localStoreUrl(port: number, connections = LOCAL_STORE_CLIENT_CONNECTIONS): string {
  return `mongodb://127.0.0.1:${port}/?maxPoolSize=${connections}`;
}
const postgresAdminUrl = () => process.env.LPM_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const PG_NAME_RE = /^[a-z_][a-z0-9_]{0,62}$/;

function cacheRoot(): string {
  return join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'lpm');
}

// Built from tools/ferretdb (its go.mod pins the version) with the version file its
// release builds generate: a plain `go install` of a FerretDB module leaves that file
// empty, and the binary panics at start. Built in a folder of its own and renamed
// into place, so that processes starting a store at the same time on a fresh
// machine do not clash.
function buildFerretdb(binDir: string): void {
  const work = mkdtempSync(join(cacheRoot(), `ferretdb-build-${FERRETDB_VERSION}-`));
  for (const f of ['go.mod', 'go.sum', 'tools.go']) cpSync(join(repoRoot, 'tools/ferretdb', f), join(work, f));
  const env = { ...process.env, GOFLAGS: '-buildvcs=false' };
  execFileSync('go', ['mod', 'vendor'], { cwd: work, env, stdio: 'pipe' });
  writeFileSync(join(work, 'vendor/github.com/FerretDB/FerretDB/build/version/version.txt'), `${FERRETDB_VERSION}\n`);
  execFileSync(
    'go',
    ['build', '-mod=vendor', '-o', join(work, 'ferretdb'), 'github.com/FerretDB/FerretDB/cmd/ferretdb'],
    {
      cwd: work,
      env,
      stdio: 'pipe',
    },
  );
  renameSync(join(work, 'ferretdb'), join(binDir, 'ferretdb'));
  rmSync(work, { recursive: true, force: true });
}

/** Path of a FerretDB binary, building it on first use (about a minute). */
export function ensureFerretdbBinary(): string {
  if (process.env.FERRETDB_BIN) return process.env.FERRETDB_BIN;
  const dir = join(cacheRoot(), `ferretdb-${FERRETDB_VERSION}`);
  const bin = join(dir, 'ferretdb');
  if (existsSync(bin)) return bin;
  mkdirSync(dir, { recursive: true });
  process.stderr.write(`building FerretDB ${FERRETDB_VERSION} into ${dir} ...\n`);
  buildFerretdb(dir);
  return bin;
}

export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolvePort(port));
    });
  });
}

export function isListening(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect({ port, host });
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('error', () => done(false));
  });
}

export interface RunningStore {
  url: string;
  port: number;
  /** FerretDB's process id. */
  pid: number;
  /** What FerretDB stores into: a PostgreSQL URL or a SQLite folder. */
  backend: string;
  stop(): Promise<void>;
}

function postgresUrl(database?: string): string {
  const url = new URL(postgresAdminUrl());
  if (database) url.pathname = `/${database}`;
  return url.toString();
}

/**
 * FerretDB's Go garbage collector, unless the environment sets it: collections eight
 * times rarer than Go's default, which cut FerretDB's CPU per operation by about a
 * fifth under a mixed insert, update and find load (docs/ferretdb.md), under a soft
 * cap above anything FerretDB was seen to keep live (a page of 100,000 cases, sorted
 * and counted in Go, about 0.9 GB): a cap below what is live makes Go collect all
 * the time, and at 512 MiB that page took three times as long.
 */
export const FERRETDB_GO_GC = { GOGC: '800', GOMEMLIMIT: '2GiB' };

/** How often the local store's tables are looked at for vacuuming, where the server does not vacuum. */
const VACUUM_EVERY_MS = 5000;

async function connectTo(database?: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: postgresUrl(database), connectionTimeoutMillis: 2000 });
  await client.connect();
  return client;
}

async function withPostgres<T>(fn: (client: pg.Client) => Promise<T>, database?: string): Promise<T | null> {
  let client: pg.Client;
  try {
    client = await connectTo(database);
  } catch {
    return null;
  }
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * Creates the PostgreSQL database FerretDB stores into, with its GIN indexing
 * (local-store-indexes.ts), and returns FerretDB's URL of it; null when no
 * PostgreSQL answers.
 */
async function postgresBackend(database: string): Promise<string | null> {
  if (!PG_NAME_RE.test(database)) throw new Error(`not a PostgreSQL database name: ${database}`);
  const created = await withPostgres(async (client) => {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (!rowCount) await client.query(`CREATE DATABASE ${database}`);
    return true;
  });
  if (!created) return null;
  await withPostgres(installGinIndexing, database);
  const url = new URL(postgresUrl(database));
  for (const [name, value] of Object.entries(FERRETDB_POSTGRES_PARAMS)) url.searchParams.set(name, value);
  return url.toString();
}

/** Drops a database made by startFerretdb (test and benchmark runs clean up with it). */
export async function dropPostgresDatabase(database: string): Promise<void> {
  if (!PG_NAME_RE.test(database)) throw new Error(`not a PostgreSQL database name: ${database}`);
  await withPostgres((client) => client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`));
}

/**
 * Starts FerretDB and resolves once it accepts connections. It stores into the
 * PostgreSQL database `database` when PostgreSQL answers at LPM_POSTGRES_URL
 * (FerretDB serves filtered and sorted queries several times faster there), else
 * into SQLite files in dataDir.
 */
/** The local store for one command: the one running on `local.port`, else one started until stop(). */
export async function localStoreForCommand(
  local = { port: LOCAL_STORE_PORT, dataDir: localStoreDataDir, database: LOCAL_STORE_DATABASE },
) {
  if (await isListening(local.port)) return { url: localStoreUrl(local.port), stop: async () => {} };
  const started = await startFerretdb(local);
  return { url: started.url, stop: () => started.stop() };
}

export async function startFerretdb(opts: {
  dataDir: string;
  database: string;
  port?: number;
  logFile?: string;
}): Promise<RunningStore> {
  const bin = ensureFerretdbBinary();
  const port = opts.port ?? (await freePort());
  const debugPort = await freePort();
  mkdirSync(opts.dataDir, { recursive: true });
  const pgUrl = await postgresBackend(opts.database);
  const backendArgs = pgUrl
    ? ['--handler=postgresql', `--postgresql-url=${pgUrl}`]
    : ['--handler=sqlite', `--sqlite-url=file:${opts.dataDir}/`];
  const child: ChildProcess = spawn(
    bin,
    [
      ...backendArgs,
      `--listen-addr=127.0.0.1:${port}`,
      `--debug-addr=127.0.0.1:${debugPort}`,
      `--state-dir=${opts.dataDir}`,
      '--telemetry=disable',
      '--log-level=warn',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...FERRETDB_GO_GC, ...process.env } },
  );
  const log = createWriteStream(opts.logFile ?? join(opts.dataDir, 'ferretdb.log'), { flags: 'a' });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  const deadline = Date.now() + 20_000;
  while (!(await isListening(port))) {
    if (exited) throw new Error(`FerretDB exited at start; see ${opts.dataDir}/ferretdb.log`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error('FerretDB did not start listening within 20 s');
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  // Where the server does not vacuum (local-store-vacuum.ts); a store that cannot be vacuumed still serves.
  const vacuumFailed = (err: unknown) => log.write(`lpm vacuum: ${(err as Error).message}\n`);
  const vacuuming: Vacuuming | null = pgUrl
    ? await startVacuuming(() => connectTo(opts.database), VACUUM_EVERY_MS, vacuumFailed).catch(
        (err) => (vacuumFailed(err), null),
      )
    : null;
  return {
    url: localStoreUrl(port),
    port,
    pid: child.pid!,
    backend: pgUrl ? `PostgreSQL database ${opts.database}` : `SQLite in ${opts.dataDir}`,
    stop: async () => {
      await vacuuming?.stop();
      await new Promise<void>((done) => {
        if (exited) return done();
        child.once('exit', () => done());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 5000).unref();
      });
    },
  };
}
