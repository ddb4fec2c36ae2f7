// Delivery attempts, a signed POST each, up to `concurrency` at once.
import type { ConsumerHandle } from '@lpm/shared/messaging/broker';
import type { WorkQueue } from '@lpm/shared/messaging/work-queue';
import type { AttemptJob, Deliveries } from '../domain/deliveries.ts';

export function consumeAttemptJobs(
  queue: WorkQueue<AttemptJob>,
  deliveries: Deliveries,
  concurrency: number,
): Promise<ConsumerHandle> {
  return queue.consume((job) => deliveries.attempt(job), { prefetch: concurrency });
}
