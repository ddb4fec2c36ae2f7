// The package as a Node 20 project gets it: built to dist/ (npm pack runs the build),
// and loaded by the machine's own Node 20, which cannot strip TypeScript.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const sdk = fileURLToPath(new URL('..', import.meta.url));

test('when the package is built, then Node 20 imports it through its exports and gets the client and the verifier', () => {
  execFileSync('npm', ['run', 'build'], { cwd: sdk, stdio: 'pipe' });
  const probe = "import('@lpm/sdk').then((m) => console.log(process.versions.node.split('.')[0], typeof m.createClient, typeof m.verifyWebhook, typeof m.LpmError))";
  const out = execFileSync('/usr/bin/node', ['--input-type=module', '-e', probe], { cwd: sdk, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } }).trim();
  expect(out).toBe('20 function function function');
}, 120_000);
