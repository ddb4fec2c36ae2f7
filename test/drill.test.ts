// The fault drill at CI size. `npm run drill -- --writes 1000 --short`
// drives 1,000 writes through the gateway while the broker restarts, the store is
// cut and then hangs, and every process is SIGKILLed once (the launcher restarts
// it); nothing may be lost or left dead-lettered, every answer is in the envelope,
// and the state agrees. No timing is asserted: on a busy machine the writes take
// longer and the drill waits longer for quiet (up to 15 minutes when something is
// missing), so the test's own limit is generous. The drill's schedule kills
// a process inside the store cut; a drill whose launcher dies fails at once with a
// report; SIGTERM removes everything the drill made. `--cluster 3 --writes 500` runs
// it on a RabbitMQ cluster of its own whose nodes it kills and freezes.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import pg from 'pg';
import { isListening } from '../scripts/local-store.ts';
import { runNodeScript } from '../scripts/system.ts';
import { SERVICE_NAMES } from '../shared/src/service/names.ts';
import { waitFor } from '@lpm/test-kit/wait';

const root = fileURLToPath(new URL('..', import.meta.url));

/** A drill run in the background: what it printed so far, and its exit code once it ends. */
const startDrill = (args: string[], env: NodeJS.ProcessEnv = process.env) =>
  runNodeScript('scripts/drill/main.ts', args, env);

/** What the drill printed of its system: its run id, its first port, its launcher's pid. */
function systemOf(output: string) {
  const run = /drill: run (\w+)/.exec(output)![1];
  const [, port, launcher] = /drill: the system on http:\/\/127\.0\.0\.1:(\d+) \(PORT\.\.PORT\+7\), launcher pid (\d+)/
    .exec(output)!
    .map(Number);
  return { run, port, launcher };
}

const processesMentioning = (text: string) =>
  readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e) && Number(e) !== process.pid)
    .filter((e) => {
      try {
        return (
          readFileSync(`/proc/${e}/cmdline`, 'utf8').includes(text) ||
          readFileSync(`/proc/${e}/environ`, 'utf8').includes(text)
        );
      } catch {
        return false;
      }
    });

test('when 1,000 writes run through a broker restart, a store cut with a SIGKILL inside it, a store hang and a SIGKILL of every process, then no event is lost or dead-lettered, every answer is in the envelope and the state agrees', async () => {
  const report = join(process.env.LPM_TEST_DIR!, 'drill.json');
  const run = await promisify(execFile)(
    process.execPath,
    ['scripts/drill/main.ts', '--writes', '1000', '--short', '--json', report],
    {
      cwd: root,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    },
  ).catch((e: { code: number; stdout: string; stderr: string }) => e);
  const r = JSON.parse(readFileSync(report, 'utf8'));
  const verdict = {
    lost: r['events.lost'],
    lostSample: r['events.lost_sample'],
    deadLettered: r['events.dead_lettered_by_queue'],
    webhooksDeactivated: r['webhooks.deactivated'],
    outsideEnvelope: r['answers.outside_envelope'],
    outsideSample: r['answers.outside_sample'],
    stateAgrees: r['state.agrees'],
    disagreements: r['state.disagreements'],
    failedFaults: r.faults.filter((f: { detail?: string }) => f.detail),
  };
  expect(verdict).toEqual({
    lost: 0,
    lostSample: [],
    deadLettered: {},
    webhooksDeactivated: [],
    outsideEnvelope: 0,
    outsideSample: [],
    stateAgrees: true,
    disagreements: [],
    failedFaults: [],
  });
  expect(r.faults.map((f: { name: string }) => f.name).sort()).toEqual(
    [
      'broker restart',
      'store cut with a SIGKILL of activities inside',
      'store hang',
      ...['gateway', ...SERVICE_NAMES].map((n) => `SIGKILL ${n}`),
    ].sort(),
  );
  expect(r['launcher.ended']).toBeNull();
  expect(r['writes.acknowledged']).toBeGreaterThanOrEqual(1000 - r['writes.refused']);
  expect(r['events.expected']).toBeGreaterThan(900);
  expect(r['events.delivered']).toBe(r['events.expected']);
  expect((run as { code?: number }).code ?? 0).toBe(0);
}, 2_400_000);

test('when 500 writes run on a three-node RabbitMQ cluster while the leading node and another are SIGKILLed, a third is frozen and Redis is out, then nothing is lost, every answer is in the envelope, the state agrees, and the cluster is gone after', async () => {
  const report = join(process.env.LPM_TEST_DIR!, 'drill-cluster.json');
  const machineNodes = () =>
    JSON.parse(execFileSync('rabbitmqctl', ['cluster_status', '--formatter', 'json'], { encoding: 'utf8' }))
      .running_nodes;
  const nodesBefore = machineNodes();
  const run = await promisify(execFile)(
    process.execPath,
    ['scripts/drill/main.ts', '--cluster', '3', '--writes', '500', '--json', report],
    {
      cwd: root,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    },
  ).catch((e: { code: number; stdout: string; stderr: string }) => e);
  if (!existsSync(report))
    throw new Error(
      `the drill wrote no report (exit ${(run as { code?: number }).code}):\n${run.stdout.slice(-3000)}\n${run.stderr.slice(-6000)}`,
    );
  const r = JSON.parse(readFileSync(report, 'utf8'));
  expect({
    lost: r['events.lost'],
    lostSample: r['events.lost_sample'],
    deadLettered: r['events.dead_lettered_by_queue'],
    outsideEnvelope: r['answers.outside_envelope'],
    outsideSample: r['answers.outside_sample'],
    stateAgrees: r['state.agrees'],
    disagreements: r['state.disagreements'],
    failedFaults: r.faults.filter((f: { detail?: string }) => f.detail),
    faults: r.faults.map((f: { name: string }) => f.name),
    nodes: r['broker.nodes'],
  }).toEqual({
    lost: 0,
    lostSample: [],
    deadLettered: {},
    outsideEnvelope: 0,
    outsideSample: [],
    stateAgrees: true,
    disagreements: [],
    failedFaults: [],
    faults: [
      'SIGKILL of the node leading the most queues',
      'SIGKILL of another node',
      'SIGSTOP of a third node',
      'Redis out',
    ],
    nodes: 3,
  });
  // The first node killed led queues (the system's leaders spread over the nodes): their leaders moved.
  expect(r['broker.failovers']).toBeGreaterThan(0);
  // events.max_delay_ms is a speed figure (the drill prints it against its bound), not asserted here.
  expect(r['events.max_delay_ms']).toBeGreaterThan(0);
  // When the slowest event's write was answered, to set against the faults' times.
  const slowestAnswered = Date.parse(r['events.max_delay_answered_at']);
  expect(slowestAnswered).toBeGreaterThan(Date.parse(r.faults[0].startedAt) - 120_000);
  expect(slowestAnswered).toBeLessThan(Date.now());
  // Of that wait, the part before the webhooks service took the event in (found in its store).
  expect(r['events.max_delay_fanned_out_after_ms']).toEqual(expect.any(Number));
  expect(r['events.max_delay_fanned_out_after_ms']).toBeLessThanOrEqual(r['events.max_delay_ms']);
  expect(r['events.delivered']).toBe(r['events.expected']);
  expect((run as { code?: number }).code ?? 0).toBe(0);
  const clusterRoot = /drill: the cluster's nodes .* in (\S+)/.exec((run as { stdout: string }).stdout)![1];
  expect(existsSync(clusterRoot)).toBe(false);
  expect(machineNodes()).toEqual(nodesBefore);
}, 1_800_000);

test('when the launcher dies during the writes, then the drill says so at once, fails with a report and stops what the launcher left running', async () => {
  const report = join(process.env.LPM_TEST_DIR!, 'drill-launcher-dies.json');
  const drill = startDrill(['--writes', '1000', '--short', '--json', report]);
  await waitFor('the writes begun', () => /drill: 1000 writes at/.test(drill.output()), 180_000);
  const { port, launcher } = systemOf(drill.output());
  await new Promise((r) => setTimeout(r, 3000));
  // SIGKILL: the launcher cannot stop its processes, which go on serving without it.
  process.kill(launcher, 'SIGKILL');
  const killedAt = Date.now();
  await waitFor('the drill noticing', () => /drill: the launcher ended \(SIGKILL\)/.test(drill.output()), 30_000);
  expect(Date.now() - killedAt).toBeLessThan(30_000);
  const code = await drill.exited;
  expect(code).toBe(1);
  expect(drill.output()).toMatch(/drill: FAILED/);
  const r = JSON.parse(readFileSync(report, 'utf8'));
  expect(r['launcher.ended']).toBe('SIGKILL');
  expect(r['state.disagreements']).toEqual(['not checked: the launcher ended']);
  expect(await Promise.all([0, 1, 2, 3, 4, 5, 6, 7].map((i) => isListening(port + i)))).toEqual(Array(8).fill(false));
}, 600_000);

test('when the drill is stopped with SIGTERM, then its system, FerretDB, database, vhost, Redis keys and files are removed', async () => {
  // Not under Jest's run: the drill makes its own FerretDB, database, vhost and Redis prefix.
  const env = { ...process.env };
  delete env.LPM_TEST_RUN;
  const drill = startDrill(['--writes', '1000', '--short'], env);
  await waitFor('the writes begun', () => /drill: 1000 writes at/.test(drill.output()), 240_000);
  const { run, port } = systemOf(drill.output());
  expect(processesMentioning(`lpm-drill-${run}`).length).toBeGreaterThan(0);
  drill.proc.kill('SIGTERM');
  expect(await drill.exited).toBe(143);

  expect(processesMentioning(`lpm-drill-${run}`)).toEqual([]);
  expect(await Promise.all([0, 1, 2, 3, 4, 5, 6, 7].map((i) => isListening(port + i)))).toEqual(Array(8).fill(false));
  expect(readdirSync(tmpdir()).filter((d) => d.startsWith(`lpm-drill-${run}-`))).toEqual([]);
  expect(
    execFileSync('rabbitmqctl', ['list_vhosts', '-q', '--no-table-headers'], { encoding: 'utf8' })
      .split('\n')
      .map((v) => v.trim()),
  ).not.toContain(`lpm-drill-${run}`);
  const redis = new Redis(process.env.REDIS_URL!);
  try {
    expect(await redis.keys(`lpm-drill-${run}:*`)).toEqual([]);
  } finally {
    redis.disconnect();
  }
  // Its FerretDB stored into PostgreSQL when one answers (else into SQLite files in its folder, checked above).
  const postgres = new pg.Client({
    connectionString: process.env.LPM_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  });
  const reachable = await postgres.connect().then(
    () => true,
    () => false,
  );
  if (reachable) {
    try {
      expect(
        (await postgres.query('SELECT 1 FROM pg_database WHERE datname = $1', [`lpm_drill_${run}`])).rowCount,
      ).toBe(0);
    } finally {
      await postgres.end();
    }
  }
}, 600_000);
