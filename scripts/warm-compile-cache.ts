// Fills Node's compile cache (NODE_COMPILE_CACHE) with every module the system's
// processes load, by importing their entry points (which start nothing when
// imported). A process that finds all of its TypeScript there never loads Node's
// type stripper (amaro: swc in WebAssembly, whose memory stays resident), and
// starts with its code already compiled: about 12 MB less resident memory each
// (docs/benchmarks.md). `npm start` runs this before it starts the processes; the
// image's build runs it as the user the processes run as, since the cache's
// folder is per user id (deploy/Dockerfile).
//   node scripts/warm-compile-cache.ts DIR
//
// It imports none of the project's modules statically: those load before the cache
// is enabled, and would be stripped outside it.
import { existsSync, readdirSync } from 'node:fs';
import { constants, enableCompileCache, flushCompileCache } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = resolve(import.meta.dirname, '..');

/** The scripts the system's processes run: the gateway, the operator CLI and each service. */
export function entryPoints(): string[] {
  const services = readdirSync(join(root, 'services'))
    .map((name) => `services/${name}/src/server.ts`)
    .filter((p) => existsSync(join(root, p)));
  return ['gateway/src/server.ts', 'gateway/src/cli/main.ts', ...services].map((p) => join(root, p));
}

if (import.meta.main) {
  const dir = process.argv[2] ?? process.env.NODE_COMPILE_CACHE;
  if (!dir) {
    process.stderr.write('usage: node scripts/warm-compile-cache.ts DIR (or NODE_COMPILE_CACHE=DIR)\n');
    process.exit(2);
  }
  const cache = enableCompileCache(dir);
  if (
    cache.status !== constants.compileCacheStatus.ENABLED &&
    cache.status !== constants.compileCacheStatus.ALREADY_ENABLED
  ) {
    process.stderr.write(
      `compile cache not enabled in ${dir}: ${cache.message ?? 'disabled (NODE_DISABLE_COMPILE_CACHE)'}\n`,
    );
    process.exit(1);
  }
  for (const entry of entryPoints()) await import(pathToFileURL(entry).href);
  flushCompileCache();
  // Imported libraries may keep handles open (nothing was started, but nothing needs to end either).
  process.exit(0);
}
