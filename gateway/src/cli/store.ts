// The store the CLI works on: MONGO_URL when set, else the local FerretDB of
// `npm start`, started for the command's duration when it is not running.
import { isListening, LOCAL_STORE_DATABASE, LOCAL_STORE_PORT, localStoreDataDir, localStoreUrl, startFerretdb } from '@lpm/shared/local-store';
import type { Store } from '@lpm/shared/store/orm';
import { openGatewayStore } from '../data/store.ts';

export interface LocalStore {
  port: number;
  dataDir: string;
  database: string;
}

export async function openCliStore(
  opts: { mongoUrl?: string; dbPrefix: string },
  local: LocalStore = { port: LOCAL_STORE_PORT, dataDir: localStoreDataDir, database: LOCAL_STORE_DATABASE },
): Promise<Store> {
  if (opts.mongoUrl) return openGatewayStore({ url: opts.mongoUrl, dbPrefix: opts.dbPrefix });
  if (await isListening(local.port)) return openGatewayStore({ url: localStoreUrl(local.port), dbPrefix: opts.dbPrefix });
  const started = await startFerretdb({ dataDir: local.dataDir, database: local.database, port: local.port });
  try {
    return stoppingAfter(await openGatewayStore({ url: started.url, dbPrefix: opts.dbPrefix }), () => started.stop());
  } catch (e) {
    await started.stop();
    throw e;
  }
}

/** The store, whose close also runs `after` (stopping the FerretDB started for it). */
function stoppingAfter(store: Store, after: () => Promise<void>): Store {
  return {
    db: store.db,
    close: async () => {
      try {
        await store.close();
      } finally {
        await after();
      }
    },
  };
}
