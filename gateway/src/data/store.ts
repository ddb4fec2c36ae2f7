// The gateway's database: `<prefix>gateway` on the platform's MongoDB (or FerretDB).
import { openOrm, type Orm } from '@lpm/shared/store/orm';
import { GATEWAY_ENTITIES } from './data/entities.ts';

export const gatewayDbName = (dbPrefix: string) => `${dbPrefix}gateway`;

export function openGatewayStore(opts: { url: string; dbPrefix: string }): Promise<Orm> {
  return openOrm({ url: opts.url, dbName: gatewayDbName(opts.dbPrefix), entities: GATEWAY_ENTITIES });
}

export async function pingStore(orm: Orm): Promise<void> {
  await orm.em.getConnection().getDb().command({ ping: 1 });
}
