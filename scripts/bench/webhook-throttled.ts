// The webhook limited to a few deliveries a second that `fanout_throttled` runs beside
// the fan-out: one more webhook on client.created, in the scenario's first team, to a
// receiver of its own, with a rate_limit. Its deliveries wait their turns (in Redis,
// across the service's replicas) while the other webhooks' go on; the scenario's
// figures are the other webhooks', and beside them this one's: how many arrived of
// those owed, and the most in any one second.
import { busiestSecond, startHttpsReceiver, type HttpsReceiver } from './internals.ts';
import { sleep } from './support.ts';
import { answerAfter, bodyOf, subscribeHooks, type ThrottledFigures } from './webhook-support.ts';

export async function throttledHook(rate: number, gatewayUrl: string, key: string, receivers: HttpsReceiver[]) {
  const receiver = await startHttpsReceiver(answerAfter(0));
  receivers.push(receiver);
  await subscribeHooks(gatewayUrl, key, [`${receiver.url}/throttled`], ['client.created'], { rate_limit: rate });
  const arrivals = () => receiver.requests.filter((r) => bodyOf(r).type === 'client.created').map((r) => r.at);
  return {
    /** Waits (up to `patienceMs`) for the `owed` deliveries still in line, and prints and returns the figures. */
    async report(name: string, owed: number, patienceMs: number): Promise<ThrottledFigures> {
      const deadline = Date.now() + patienceMs;
      while (arrivals().length < owed && Date.now() < deadline) await sleep(250);
      const at = arrivals();
      const figures = { owed, arrived: at.length, busiestSecond: busiestSecond(at) };
      console.log(
        `  ${name}: the webhook limited to ${rate}/s got ${figures.arrived} of ${owed}, at most ${figures.busiestSecond} in one second`,
      );
      return figures;
    },
  };
}
