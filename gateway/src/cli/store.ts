// The store the CLI works on: MONGO_URL when set, else a store started for the
// command's duration by whoever runs the CLI. `npm run admin` (scripts/admin.ts)
// passes the local FerretDB of `npm start`, development material that the image
// does not have; run directly (the image), the CLI needs MONGO_URL.
import type { Store } from '@lpm/shared/store/orm';
import { openGatewayStore } from '../data/store.ts';

/** A store for one command: its URL, and how to let it go afterwards. */
export type StartStore = () => Promise<{ url: string; stop(): Promise<void> }>;

export async function openCliStore(
  opts: { mongoUrl?: string; dbPrefix: string },
  startStore?: StartStore,
): Promise<Store> {
  if (opts.mongoUrl) return openGatewayStore({ url: opts.mongoUrl, dbPrefix: opts.dbPrefix });
  if (!startStore)
    throw new Error('MONGO_URL is required (npm run admin uses the local store of npm start without it)');
  const started = await startStore();
  try {
    return stoppingAfter(await openGatewayStore({ url: started.url, dbPrefix: opts.dbPrefix }), () => started.stop());
  } catch (e) {
    await started.stop();
    throw e;
  }
}

/** The store, whose close also runs `after` (letting go of the store started for it). */
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
