// The service registry (shared/src/service/registry.ts) is the one list of the
// domain services: every folder under services/ is in it, and the deploy manifests,
// the workspaces and the image name every service of it, on its port.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { SERVICES } from '../shared/src/service/registry.ts';

const ROOT = resolve(import.meta.dirname, '..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const compose = read('docker-compose.yml');
const k8s = (file: string) => (existsSync(join(ROOT, 'deploy/k8s', file)) ? read(`deploy/k8s/${file}`) : '');
const server = (name: string) => `command: ["node", "services/${name}/src/server.ts"]`;
/** The names of a GATEWAY_SERVICES setting in `yaml`. */
const gatewayServices = (yaml: string) => (/GATEWAY_SERVICES: "?([a-z,]+)"?/.exec(yaml)?.[1] ?? '').split(',');
/** A top-level service of docker-compose.yml, up to the next one. */
const composeBlock = (name: string) =>
  new RegExp(`\\n  ${name}:\\n([\\s\\S]*?)(?=\\n  [a-z-]+:\\n|\\nvolumes:)`).exec(compose)?.[1] ?? '';

/** The services of the registry that `check` finds wrong, with what is expected of them. */
const failing = (check: (s: (typeof SERVICES)[number]) => boolean) =>
  SERVICES.filter((s) => !check(s)).map((s) => `${s.name}:${s.port}`);

test('when a folder is under services/, then the registry has it, with its app builder module', () => {
  const folders = readdirSync(join(ROOT, 'services')).filter((f) =>
    existsSync(join(ROOT, 'services', f, 'package.json')),
  );
  expect(folders.sort()).toEqual(SERVICES.map((s) => s.name).sort());
  expect(
    failing(
      (s) => existsSync(join(ROOT, s.app.module)) && read(s.app.module).includes(`export function ${s.app.builder}(`),
    ),
  ).toEqual([]);
});

test('when the registry gives ports, then they are distinct and none is one of the gateway (8080, and 8087 for /internal)', () => {
  const ports: number[] = SERVICES.map((s) => s.port);
  expect(new Set(ports).size).toBe(ports.length);
  expect(ports.filter((p) => p === 8080 || p === 8087)).toEqual([]);
});

test('when a service is in the registry, then the Kubernetes manifests deploy it on its port and the gateway waits for it', () => {
  expect(
    failing(
      (s) =>
        k8s(`${s.name}.yaml`).includes(server(s.name)) && k8s(`${s.name}.yaml`).includes(`containerPort: ${s.port}`),
    ),
  ).toEqual([]);
  expect(failing((s) => new RegExp(`^  - ${s.name}\\.yaml$`, 'm').test(k8s('kustomization.yaml')))).toEqual([]);
  expect(
    failing((s) => k8s('configmap.yaml').includes(`${s.name.toUpperCase()}_URL: "http://${s.name}:${s.port}"`)),
  ).toEqual([]);
  expect(failing((s) => gatewayServices(k8s('configmap.yaml')).includes(s.name))).toEqual([]);
});

test('when a service is in the registry, then docker-compose.yml runs it on its port and the gateway waits for it', () => {
  expect(
    failing((s) => composeBlock(s.name).includes(server(s.name)) && composeBlock(s.name).includes(`PORT: "${s.port}"`)),
  ).toEqual([]);
  expect(failing((s) => compose.includes(`${s.name.toUpperCase()}_URL: http://${s.name}:${s.port}`))).toEqual([]);
  expect(failing((s) => gatewayServices(compose).includes(s.name))).toEqual([]);
  expect(
    failing((s) => read('deploy/monitoring/prometheus.yml').includes(`- targets: ["${s.name}:${s.port}"]`)),
  ).toEqual([]);
});

test('when a service is in the registry, then it is a workspace and the image installs its dependencies', () => {
  const workspaces = (JSON.parse(read('package.json')) as { workspaces: string[] }).workspaces;
  expect(failing((s) => workspaces.includes(`services/${s.name}`))).toEqual([]);
  expect(
    failing((s) => read('deploy/Dockerfile').includes(`COPY services/${s.name}/package.json services/${s.name}/`)),
  ).toEqual([]);
});
