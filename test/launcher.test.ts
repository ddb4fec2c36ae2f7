// The launcher supervises as compose and Kubernetes do. A
// process that keeps dying is started again with backoff (1 s doubling to 30 s),
// however many times: here the deals service, whose port the test holds, dies at
// every start until the port is let go, and then serves. Only a configuration error
// (exit 78; here the webhooks service, refused by a bad WEBHOOK_ALLOWED_PORTS) stops
// everything at once. Either way a process says why it ends in one JSON log line.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { isListening } from '../scripts/local-store.ts';
import { SERVICE_NAMES } from '../shared/src/service/names.ts';
import { internalPort, servicePort } from '../shared/src/service/port-layout.ts';
import { restartDelayMs } from '../scripts/restart-backoff.ts';
import { freePortBlock } from '../scripts/system.ts';
import { systemEnv } from '@lpm/test-kit/running-system';
import { waitFor } from '@lpm/test-kit/wait';

const root = fileURLToPath(new URL('..', import.meta.url));

function launch(name: string, base: number, extraEnv: NodeJS.ProcessEnv = {}) {
  const proc = spawn(process.execPath, ['scripts/start.ts'], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: systemEnv(name, base, extraEnv),
  });
  let output = '';
  proc.stdout.on('data', (d) => (output += d));
  proc.stderr.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((done) => proc.once('exit', (c) => done(c)));
  return { proc, output: () => output, exited };
}

/** The gateway's ports and every service's but the webhooks service's. */
const portsButWebhooks = (base: number) => [
  base,
  internalPort(base),
  ...SERVICE_NAMES.filter((n) => n !== 'webhooks').map((n) => servicePort(base, n)),
];

/** Those of `ports` something listens on. */
const listeningOf = async (ports: number[]) =>
  (await Promise.all(ports.map(async (p) => ((await isListening(p)) ? [p] : [])))).flat();

/** The lines a process printed through the launcher (`[name] ...`), without the prefix. */
const linesOf = (output: string, name: string) =>
  output
    .split('\n')
    .filter((l) => l.startsWith(`[${name}] `))
    .map((l) => l.slice(name.length + 3));

const isJson = (line: string) => {
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
};

test('when the restart delay is asked after N deaths in a row, then it doubles from 1 s and stays at 30 s', () => {
  expect(Array.from({ length: 9 }, (_, n) => restartDelayMs(n) / 1000)).toEqual([1, 2, 4, 8, 16, 30, 30, 30, 30]);
});

test('when a process is refused by its configuration (exit 78), then the launcher does not start it again, stops everything and exits 78, and the refusal is one JSON line', async () => {
  const base = await freePortBlock();
  const launcher = launch('launcher_config', base, { WEBHOOK_ALLOWED_PORTS: 'not-a-port' });
  const code = await launcher.exited;
  const output = launcher.output();

  expect(code).toBe(78);
  expect(output.match(/\[start\] webhooks pid \d+/g)).toHaveLength(1);
  expect(output).toMatch(/\[start\] webhooks refused its configuration \(exit 78\); stopping everything/);
  const lines = linesOf(output, 'webhooks');
  expect(lines.filter((l) => !isJson(l))).toEqual([]);
  const fatal = lines.map((l) => JSON.parse(l)).find((l) => l.level === 60);
  expect(fatal.msg).toMatch(/^webhooks refused its configuration: invalid configuration:\n {2}WEBHOOK_ALLOWED_PORTS: /);
  // Everything it started is gone: the gateway, the other services.
  expect(await listeningOf(portsButWebhooks(base))).toEqual([]);
}, 120_000);

test('when a process dies at every start for another reason, then it is started again with a doubling backoff past the fifth death, nothing else stops, and it serves once the cause is gone', async () => {
  const base = await freePortBlock();
  // The deals service's port, taken: each start ends in EADDRINUSE. What connects there meanwhile (the gateway's /health) is dropped.
  const holder = createServer((socket) => socket.destroy());
  await new Promise<void>((done) => holder.listen(servicePort(base, 'deals'), '127.0.0.1', done));
  const launcher = launch('launcher_restarts', base);
  try {
    await waitFor(
      'the fifth death of deals',
      () => /\[start\] deals exited \(1\); starting it again in 16 s/.test(launcher.output()),
      120_000,
    );
    await new Promise<void>((done) => holder.close(() => done()));
    const output = launcher.output();
    for (const delay of [1, 2, 4, 8, 16])
      expect(output).toMatch(new RegExp(`\\[start\\] deals exited \\(1\\); starting it again in ${delay} s`));
    expect(output.match(/\[start\] deals pid \d+/g)).toHaveLength(5);
    expect(output).not.toMatch(/stopping everything/);
    expect(launcher.proc.exitCode).toBeNull();
    // Each death is one fatal JSON line, never a stack dump.
    const lines = linesOf(output, 'deals');
    expect(lines.filter((l) => !isJson(l))).toEqual([]);
    expect(
      lines
        .map((l) => JSON.parse(l))
        .filter((l) => l.level === 60 && /^deals failed to start: listen EADDRINUSE/.test(l.msg)),
    ).toHaveLength(5);

    await waitFor(
      'deals ready once its port is free',
      async () =>
        (await fetch(`http://127.0.0.1:${servicePort(base, 'deals')}/health/ready`).catch(() => null))?.status === 200,
      60_000,
    );
    expect(launcher.output().match(/\[start\] deals pid \d+/g)).toHaveLength(6);
  } finally {
    holder.close();
    launcher.proc.kill('SIGTERM');
    await launcher.exited;
  }
  expect(await listeningOf(portsButWebhooks(base))).toEqual([]);
}, 240_000);
