// Scenario `log` of the webhooks section: the delivery log's page
// (GET /v1/webhooks/{id}/deliveries) of a webhook with BENCH_DELIVERY_LOG deliveries
// (100,000), straight to the webhooks service: the default page (newest first) and a
// page half-way down. The deliveries are stored straight into the service's
// collection with the log's markers, ten a second over the hours before now, and
// their hours counted as retention counts them again (delivery-log-counts.ts); the
// webhook's counters document is the service's own (its ping made it).
import { MongoClient } from 'mongodb';
import { measureList } from './cases.ts';
import {
  DeliveryLogCounts,
  identityHeaders,
  logMarkers,
  type DeliveryRecord,
  type WebhookCountersRecord,
} from './internals.ts';
import { recordRun, sleep, type Bench, type Figures, type System } from './support.ts';
import { createTeams, identityOf } from './teams.ts';
import { subscribeHooks } from './webhook-support.ts';

const DELIVERIES = Number(process.env.BENCH_DELIVERY_LOG ?? 100_000);
/** One delivery every this many ms, back from now. */
const SPACING_MS = 100;
const HOUR_MS = 3_600_000;
const PAGE = 20;
/** How long the service's counter fold may take to mark the webhook's log counted. */
const READY_PATIENCE_MS = 60_000;

async function seedDeliveries(
  mongoUrl: string,
  database: string,
  teamId: string,
  webhookId: string,
): Promise<{ seconds: number; countSeconds: number }> {
  const client = await MongoClient.connect(mongoUrl);
  try {
    const db = client.db(database);
    const col = db.collection<DeliveryRecord>('deliveries');
    const now = Date.now();
    const hours = new Set<number>();
    const started = Date.now();
    for (let from = 0; from < DELIVERIES; from += 1000) {
      const batch = Array.from({ length: Math.min(1000, DELIVERIES - from) }, (_, k) => {
        const i = from + k;
        const at = new Date(now - i * SPACING_MS);
        hours.add(Math.floor(at.getTime() / HOUR_MS));
        const id = `dlv_bench${String(i).padStart(9, '0')}`;
        return {
          _id: id,
          team_id: teamId,
          webhook_id: webhookId,
          event_id: `evt_bench${String(i).padStart(9, '0')}`,
          event_type: 'client.created',
          body: JSON.stringify({
            id: `evt_bench${i}`,
            type: 'client.created',
            created_at: at.toISOString(),
            data: { object: { id: `cli_bench${i}`, name: `Cliente ${i}` } },
          }),
          status: 'succeeded' as const,
          attempts_count: 1,
          last_attempt_at: at,
          next_attempt_at: null,
          created_at: at,
          updated_at: at,
          updated_day: Math.floor(at.getTime() / 86_400_000),
          due_minute: null,
          ...logMarkers(webhookId, at),
        };
      });
      await col.insertMany(batch, { ordered: false });
    }
    const seconds = (Date.now() - started) / 1000;
    const counting = Date.now();
    await new DeliveryLogCounts(db).recount(webhookId, hours);
    // The counter fold marks the webhook's log counted once it finds no delivery without the markers (its backfill).
    const counters = db.collection<WebhookCountersRecord>('webhook_counters');
    for (const since = Date.now(); !(await counters.findOne({ _id: webhookId, log_ready: true })); await sleep(200)) {
      if (Date.now() - since > READY_PATIENCE_MS)
        throw new Error(
          `the webhooks service did not count the log of ${webhookId} within ${READY_PATIENCE_MS / 1000} s`,
        );
    }
    return { seconds, countSeconds: (Date.now() - counting) / 1000 };
  } finally {
    await client.close();
  }
}

export async function deliveryLogScenario(b: Bench, sys: System, receiverUrl: string): Promise<void> {
  const [team] = await createTeams(b, sys.tree, ['Bench delivery log']);
  const [webhookId] = await subscribeHooks(
    sys.gatewayUrl,
    team.api_key,
    [`${receiverUrl}/delivery-log`],
    ['client.deactivated'],
  );
  const seeded = await seedDeliveries(b.store.url, `${sys.tree.dbPrefix}webhooks`, team.team.id, webhookId);
  console.log(
    `\nseeded ${DELIVERIES.toLocaleString('en')} deliveries of one webhook (one every ${SPACING_MS} ms back from now) in ${seeded.seconds.toFixed(1)} s, ` +
      `their hours counted in ${seeded.countSeconds.toFixed(1)} s; the delivery log straight to the webhooks service:`,
  );
  const headers = identityHeaders(identityOf(team), b.token);
  const path = `/v1/webhooks/${webhookId}/deliveries`;
  const middle = Math.floor(DELIVERIES / PAGE / 2);
  const figures: Figures[] = [
    await measureList(
      'GET /v1/webhooks/{id}/deliveries default page',
      sys.serviceUrls.webhooks,
      { label: 'default page', path: `${path}?limit=${PAGE}` },
      headers,
    ),
    await measureList(
      `GET /v1/webhooks/{id}/deliveries page ${middle}`,
      sys.serviceUrls.webhooks,
      { label: 'middle page', path: `${path}?limit=${PAGE}&page=${middle}` },
      headers,
    ),
  ];
  b.figures.push(...figures);
  const [first, deep] = figures;
  recordRun(b, 'webhooks.delivery_log_100k.direct', first);
  b.record('webhooks.delivery_log_100k.p50_ms', first.p50);
  recordRun(b, 'webhooks.delivery_log_100k_middle.direct', deep);
  b.record('webhooks.delivery_log_100k_middle.p50_ms', deep.p50);
}
