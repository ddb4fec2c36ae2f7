// A server process's entry point: whatever ends it, it says why in one structured
// (pino JSON) log line, never a raw stack dump, and its exit code tells a supervisor
// whether starting it again can help.
import { createLogger } from '../logger.ts';
import { ConfigError } from '../config.ts';

/**
 * The exit code of a process refused by its configuration (sysexits.h EX_CONFIG):
 * starting it again cannot help, so the launcher does not. Any other exit is restarted.
 */
export const CONFIG_ERROR_EXIT = 78;

/**
 * Runs `main` as the process `name`. A configuration error exits CONFIG_ERROR_EXIT,
 * any other failure to start, an uncaught exception or an unhandled rejection exits 1,
 * each after one fatal log line. `main` resolves once the process serves; it keeps
 * running on its own listeners and timers.
 */
export async function runProcess(name: string, main: () => Promise<void>): Promise<void> {
  // Level fatal: this logger only says why the process ends, whatever LOG_LEVEL holds (it may be the bad setting).
  const log = createLogger(name, 'fatal');
  const die = (err: unknown, what: string, code = 1) => {
    log.fatal({ err }, `${name} ${what}: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(code);
  };
  process.on('uncaughtException', (err) => die(err, 'stopped on an uncaught exception'));
  process.on('unhandledRejection', (reason) => die(reason, 'stopped on an unhandled rejection'));
  try {
    await main();
  } catch (e) {
    if (e instanceof ConfigError) die(e, 'refused its configuration', CONFIG_ERROR_EXIT);
    else die(e, 'failed to start');
  }
}
