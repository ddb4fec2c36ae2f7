// The package as a Node 20 project gets it: built to dist/ (npm pack runs the build),
// and loaded by the machine's own Node 20, which cannot strip TypeScript.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const sdk = fileURLToPath(new URL('..', import.meta.url));

/** The machine's node: the first on PATH outside a node_modules folder (npm puts the project's own Node 24 before it). */
function machineNode(): string {
  const dir = (process.env.PATH ?? '')
    .split(delimiter)
    .find((d) => d && !d.split(sep).includes('node_modules') && existsSync(join(d, 'node')));
  if (!dir) throw new Error("no node on PATH outside node_modules: this test needs the machine's Node 20 there");
  return join(dir, 'node');
}

test('when the package is built, then Node 20 imports it through its exports and gets the client and the verifier', () => {
  execFileSync('npm', ['run', 'build'], { cwd: sdk, stdio: 'pipe' });
  const probe =
    "import('@lpm/sdk').then((m) => console.log(process.versions.node.split('.')[0], typeof m.createClient, typeof m.verifyWebhook, typeof m.LpmError))";
  const out = execFileSync(machineNode(), ['--input-type=module', '-e', probe], {
    cwd: sdk,
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '' },
  }).trim();
  expect(out).toBe('20 function function function');
}, 120_000);
