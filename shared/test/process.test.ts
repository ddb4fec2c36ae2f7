// runProcess: whatever ends a server process, it says why in one fatal JSON line (no
// raw stack dump) and exits with a code a supervisor can act on: 78 for a
// configuration error (not restarted), 1 for anything else.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const processModule = fileURLToPath(new URL('../src/service/process.ts', import.meta.url));
const configModule = fileURLToPath(new URL('../src/config.ts', import.meta.url));

/** Runs `body` as the main of a process named `probe`; its exit code and output lines. */
function run(body: string) {
  const source = `import { runProcess } from ${JSON.stringify(processModule)};
import { ConfigError } from ${JSON.stringify(configModule)};
void ConfigError;
await runProcess('probe', async () => { ${body} });`;
  const res = spawnSync(process.execPath, ['--input-type=module', '-e', source], {
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '' },
    timeout: 30_000,
  });
  const lines = `${res.stdout}${res.stderr}`.trim().split('\n');
  return { code: res.status, lines };
}

const parsed = (lines: string[]) =>
  lines.map((l) => JSON.parse(l) as { level: number; service: string; msg: string; err?: { message?: string } });

test.each([
  [
    'a configuration error at start',
    `throw new ConfigError(['PORT: must be an integer']);`,
    78,
    /^probe refused its configuration: invalid configuration:\n {2}PORT: must be an integer$/,
  ],
  [
    'another failure at start',
    `throw new Error('listen EADDRINUSE');`,
    1,
    /^probe failed to start: listen EADDRINUSE$/,
  ],
  [
    'an exception thrown later by a timer',
    `setTimeout(() => { throw new Error('boom'); }, 10); setInterval(() => {}, 1000);`,
    1,
    /^probe stopped on an uncaught exception: boom$/,
  ],
  [
    'a promise rejected later with nobody waiting',
    `setTimeout(() => void Promise.reject(new Error('lost')), 10); setInterval(() => {}, 1000);`,
    1,
    /^probe stopped on an unhandled rejection: lost$/,
  ],
])('when %s ends the process, then it exits with its code after one fatal JSON line', (_what, body, code, message) => {
  const res = run(body);
  expect(res.code).toBe(code);
  expect(() => parsed(res.lines)).not.toThrow();
  const lines = parsed(res.lines);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatchObject({ level: 60, service: 'probe' });
  expect(lines[0].msg).toMatch(message);
});
