// What a service's team sync routes (POST /internal/time-zone, /internal/court-calendar)
// take and answer: the gateway's change instant in, and how the run of that change
// stands out, 202 while records are left and 200 once done (jobs/team-syncs.ts).
import type { FastifyReply } from 'fastify';
import type { SyncState } from '../jobs/team-syncs.ts';
import { ok } from './envelope.ts';
import { object, typed } from './schemas.ts';

export const changedAt = () => typed<string>({ type: 'string', format: 'date-time' });

export const syncBody = object({ changed_at: changedAt() }, ['changed_at']);

export function syncAnswer(reply: FastifyReply, state: SyncState) {
  reply.status(state.done ? 200 : 202);
  return ok(state);
}
