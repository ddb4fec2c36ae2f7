// Every setting a process reads at start (the `['NAME', parser]` entries of its
// readConfig specs, and the service URLs) is documented in the README's
// configuration table and given in both deploy manifests, compose and Kubernetes,
// so a new setting cannot ship without its operators hearing of it. And every
// service that has a server is deployed by both manifests.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { SERVICE_NAMES } from '../shared/src/service/names.ts';

const ROOT = resolve(import.meta.dirname, '..');

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.includes('node_modules'))
    .map((f) => readFileSync(join(ROOT, dir, f), 'utf8'));
}

const settings = [
  ...new Set([
    ...['shared/src', 'gateway/src', ...SERVICE_NAMES.map((s) => `services/${s}/src`)]
      .flatMap((dir) => {
        try {
          return sources(dir);
        } catch {
          return [];
        }
      })
      .flatMap((text) => [...text.matchAll(/\[\s*'([A-Z][A-Z0-9_]+)',\s*[a-z]/g)].map((m) => m[1])),
    ...SERVICE_NAMES.map((s) => `${s.toUpperCase()}_URL`),
  ]),
].sort();

const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const compose = readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8');
// The base's manifests (deploy/k8s/stores is the stores' own kustomization).
const k8s = readdirSync(join(ROOT, 'deploy/k8s'), { withFileTypes: true })
  .filter((f) => f.isFile())
  .map((f) => readFileSync(join(ROOT, 'deploy/k8s', f.name), 'utf8'))
  .join('\n');
const setIn = (yaml: string, name: string) => new RegExp(`^\\s*(${name}:|- name: ${name}$)`, 'm').test(yaml);

test('the settings are found where the code declares them', () => {
  expect(settings).toEqual(
    expect.arrayContaining([
      'MONGO_URL',
      'INTERNAL_TOKEN',
      'TRUSTED_PROXIES',
      'CONSUMER_RETRY_FOR',
      'WEBHOOK_SECRET_KEY',
      'DEALS_URL',
    ]),
  );
});

const SERVICE_URLS = SERVICE_NAMES.map((s) => `${s.toUpperCase()}_URL`);

test('every setting is in the README configuration table', () => {
  // The service URLs share one row: `DEALS_URL` ... `WEBHOOKS_URL`.
  // A cell may be padded (Prettier aligns the table's columns).
  const cell = (text: string) => new RegExp(`^\\| ${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} +\\|`, 'm');
  const urlsRow = cell(`\`${SERVICE_URLS[0]}\` ... \`${SERVICE_URLS.at(-1)}\``);
  const documented = (name: string) =>
    cell(`\`${name}\``).test(readme) || (SERVICE_URLS.includes(name) && urlsRow.test(readme));
  expect(settings.filter((name) => !documented(name))).toEqual([]);
});

test('every setting is given in docker-compose.yml', () => {
  expect(settings.filter((name) => !setIn(compose, name))).toEqual([]);
});

test('every setting is given in the Kubernetes manifests', () => {
  expect(settings.filter((name) => !setIn(k8s, name))).toEqual([]);
});

const built = SERVICE_NAMES.filter((name) => existsSync(join(ROOT, `services/${name}/src/server.ts`)));
const listed = (yaml: string) => (/GATEWAY_SERVICES: "?([a-z,]+)"?/.exec(yaml)?.[1] ?? '').split(',');

test('every service with a server is deployed by docker-compose.yml and waited for by the gateway', () => {
  const block = (name: string) =>
    new RegExp(`\\n  ${name}:\\n([\\s\\S]*?)(?=\\n  [a-z]+:\\n|\\nvolumes:)`).exec(compose)?.[1] ?? '';
  expect(
    built.filter(
      (name) => !block(name).includes(`services/${name}/src/server.ts`) || block(name).includes('profiles:'),
    ),
  ).toEqual([]);
  expect(built.filter((name) => !listed(compose).includes(name))).toEqual([]);
  expect(
    built.filter(
      (name) =>
        !new RegExp(`depends_on:[\\s\\S]*\\n      ${name}:\\n        condition: service_healthy`).test(
          block('gateway'),
        ),
    ),
  ).toEqual([]);
});

test('every service with a server is a resource of the Kubernetes kustomization and waited for by the gateway', () => {
  const kustomization = readFileSync(join(ROOT, 'deploy/k8s/kustomization.yaml'), 'utf8');
  expect(built.filter((name) => !new RegExp(`^  - ${name}\\.yaml$`, 'm').test(kustomization))).toEqual([]);
  expect(
    built.filter((name) => !listed(readFileSync(join(ROOT, 'deploy/k8s/configmap.yaml'), 'utf8')).includes(name)),
  ).toEqual([]);
});
