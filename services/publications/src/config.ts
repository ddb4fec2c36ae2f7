// The service's own settings, read and checked at start with the platform's.
import { HTTP } from '@lpm/shared/service/names';
import { duration, readConfig, url } from '@lpm/shared/config';

export const DEFAULT_DJEN_URL = 'https://comunicaapi.pje.jus.br/api/v1';
const DEFAULT_USER_AGENT = 'lpm-publications/0.1';

/** The User-Agent must name the operator's contact (an e-mail address or a URL): the court's operators ask for it. */
function userAgent(raw: string | undefined): string {
  if (raw === undefined)
    throw new Error(
      `is required: the poller's User-Agent with the operator's contact, e.g. "${DEFAULT_USER_AGENT} (ops@example.com)"`,
    );
  if (!/[^\s@]+@[^\s@]+\.[^\s@]+|https?:\/\/\S+/.test(raw))
    throw new Error("must include the operator's contact: an e-mail address or a URL");
  if (raw.length > 300) throw new Error('must be at most 300 characters');
  return raw;
}

function pollInterval(raw: string | undefined, name: string): number {
  const ms = duration('1h')(raw, name);
  if (ms < 60_000) throw new Error(`must be at least 1m (the court's API asks for restraint): ${raw}`);
  return ms;
}

export function readPublicationsConfig(env: NodeJS.ProcessEnv = process.env) {
  return readConfig(
    {
      pollIntervalMs: ['PUBLICATIONS_POLL_INTERVAL', pollInterval],
      djenUrl: ['DJEN_URL', url(DEFAULT_DJEN_URL, HTTP)],
      djenUserAgent: ['DJEN_USER_AGENT', userAgent],
    },
    env,
  );
}
