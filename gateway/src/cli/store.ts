// The store the CLI works on: MONGO_URL when set, else the local FerretDB of
// `npm start`, started for the command's duration when it is not running. The
// local-store tooling is development material (scripts/, not in the image), so it
// is loaded only then.
import type { Store } from '@lpm/shared/store/orm';
import { openGatewayStore } from '../data/store.ts';

export interface LocalStore {
  port: number;
  dataDir: string;
  database: string;
}

export async function openCliStore(opts: { mongoUrl?: string; dbPrefix: string }, given?: LocalStore): Promise<Store> {
  if (opts.mongoUrl) return openGatewayStore({ url: opts.mongoUrl, dbPrefix: opts.dbPrefix });
  const { isListening, LOCAL_STORE_DATABASE, LOCAL_STORE_PORT, localStoreDataDir, localStoreUrl, startFerretdb } = await import('../../../scripts/local-store.ts');
  const local = given ?? { port: LOCAL_STORE_PORT, dataDir: localStoreDataDir, database: LOCAL_STORE_DATABASE };
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
    ...store,
    close: async () => {
      try {
        await store.close();
      } finally {
        await after();
      }
    },
  };
}
