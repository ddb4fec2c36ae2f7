// `npm start` on the local store: each process it runs gets its share of the store's
// connections (LOCAL_STORE_CONNECTIONS), on the port LOCAL_STORE_PORT names.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LOCAL_STORE_CONNECTIONS } from '../scripts/local-store.ts';
import { startRunningSystem, type RunningSystem } from '@lpm/test-kit/running-system';

const root = fileURLToPath(new URL('..', import.meta.url));

// Only where the tests' store is the local FerretDB (global-setup.ts), not a MONGO_URL given to the run.
const onLocalStore = process.env.LPM_TEST_PG_DATABASE ? describe : describe.skip;

/** The launcher's children: the name of each (`gateway` or the service), its MONGO_URL and NODE_COMPILE_CACHE. */
function children(launcherPid: number): { name: string; mongoUrl: string; compileCache: string }[] {
  const found: { name: string; mongoUrl: string; compileCache: string }[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    let stat: string;
    let cmdline: string;
    let environ: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      environ = readFileSync(`/proc/${pid}/environ`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid !== launcherPid) continue;
    const name =
      /services\/([a-z]+)\/src\/server\.ts/.exec(cmdline)?.[1] ??
      (cmdline.includes('gateway/src/server.ts') ? 'gateway' : cmdline);
    const variable = (key: string) =>
      environ
        .split('\0')
        .find((v) => v.startsWith(`${key}=`))
        ?.slice(key.length + 1) ?? '';
    found.push({ name, mongoUrl: variable('MONGO_URL'), compileCache: variable('NODE_COMPILE_CACHE') });
  }
  return found;
}

onLocalStore('the launcher on the local store', () => {
  let sys: RunningSystem;
  const port = new URL(process.env.MONGO_URL!).port;

  beforeAll(async () => {
    sys = await startRunningSystem('shares', { LOCAL_STORE_PORT: port });
  }, 90_000);

  afterAll(async () => {
    await sys.stop();
  });

  test('when LOCAL_STORE_PORT names a running local store, then the gateway and each service get their share of its connections and the warmed compile cache, and the system answers', async () => {
    const started = children(sys.launcher.pid!).sort((a, b) => a.name.localeCompare(b.name));
    expect(started.map((c) => c.name)).toEqual(Object.keys(LOCAL_STORE_CONNECTIONS).sort());
    for (const { name, mongoUrl } of started) {
      const url = new URL(mongoUrl);
      expect({ name, port: url.port, maxPoolSize: url.searchParams.get('maxPoolSize') }).toEqual({
        name,
        port,
        maxPoolSize: String(LOCAL_STORE_CONNECTIONS[name as keyof typeof LOCAL_STORE_CONNECTIONS]),
      });
    }
    // One cache for all, warmed before they started (test/compile-cache.test.ts checks what warming covers).
    const caches = new Set(started.map((c) => c.compileCache));
    expect(caches.size).toBe(1);
    const [cache] = caches;
    expect(cache).toBe(join(root, 'node_modules', '.cache', 'lpm-compile-cache'));
    expect(readdirSync(cache).flatMap((v) => readdirSync(join(cache, v))).length).toBeGreaterThan(100);

    const team = sys.team('Cotas');
    const created = await sys.call(team.api_key, 'POST', '/v1/clients', { type: 'PJ', name: 'Cotas Ltda' });
    expect(created.status).toBe(201);
    expect((await sys.call(team.api_key, 'GET', `/v1/clients/${created.body.data.id}`)).body.data).toMatchObject({
      name: 'Cotas Ltda',
    });
  });
});

test('when LOCAL_STORE_PORT is not a port, then the launcher refuses to start, naming it', () => {
  const res = spawnSync(process.execPath, ['scripts/start.ts'], {
    cwd: root,
    env: { ...process.env, LOCAL_STORE_PORT: '27o17' },
    encoding: 'utf8',
    timeout: 30_000,
  });
  expect(res.status).toBe(1);
  expect(res.stdout).toContain('LOCAL_STORE_PORT: must be an integer from 1 to 65535');
});
