// The compile cache that `npm start` and the image warm (scripts/warm-compile-cache.ts):
// warming starts nothing, and afterwards no process strips a TypeScript file itself
// at start, which would load Node's type stripper and keep it resident.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { entryPoints } from '../scripts/warm-compile-cache.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
// Nothing of Jest's own Node options: the processes run as the launcher runs them.
const baseEnv = { ...process.env, NODE_OPTIONS: '' };

describe('the compile cache', () => {
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'lpm-compile-cache-'));
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  test('when warmed into a new folder, then it imports every entry point without starting any, and fills the folder', () => {
    const warm = spawnSync(process.execPath, ['scripts/warm-compile-cache.ts', dir], {
      cwd: root,
      env: baseEnv,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect({ status: warm.status, signal: warm.signal, stderr: warm.stderr }).toEqual({
      status: 0,
      signal: null,
      stderr: '',
    });
    const [versioned] = readdirSync(dir);
    expect(readdirSync(join(dir, versioned)).length).toBeGreaterThan(100);
  });

  test.each(entryPoints().map((entry) => [relative(root, entry), entry]))(
    'when %s starts from the warmed cache, then every TypeScript file it loads comes from the cache',
    (_name, entry) => {
      // Each stops right after loading its modules: the CLI at --help, the others at the invalid PORT.
      const args = entry.endsWith('cli/main.ts') ? [entry, '--help'] : [entry];
      const run = spawnSync(process.execPath, args, {
        cwd: root,
        env: { ...baseEnv, NODE_COMPILE_CACHE: dir, NODE_DEBUG_NATIVE: 'COMPILE_CACHE', PORT: 'not-a-port' },
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(run.signal).toBeNull();
      const stripped = (outcome: string) =>
        [
          ...run.stderr.matchAll(
            new RegExp(`^\\[compile cache\\] ${outcome} for StrippedTypeScript (\\S+?)(\\.\\.\\.success)?$`, 'gm'),
          ),
        ].map((m) => m[1]);
      expect(stripped('no transpile cache')).toEqual([]);
      expect(stripped('retrieving transpile cache')).toContain(pathToFileURL(entry).href);
    },
  );
});
