// financial.overdue (docs/decisions.md §5, time-driven events): once per record when its
// due date has passed unpaid. The due instant (overdue_at) is set by every write
// (domain/financial.ts); the shared time signals emit it once, with the record in
// its detail read shape, whatever the number of replicas.
import { newEvent } from '@lpm/shared/events';
import type { SignalDefinition } from '@lpm/shared/jobs/time-signals';
import type { FinancialRecord } from '../data/financial-entity.ts';
import type { Financial } from '../domain/financial.ts';

export function overdueSignals(financial: Financial): SignalDefinition<FinancialRecord>[] {
  return [
    {
      type: 'financial.overdue',
      collection: 'financial_records',
      dueField: 'overdue_at',
      event: async (r) =>
        r.status === 'pending'
          ? newEvent('financial.overdue', r.team_id, await financial.detailOf(r), null, null)
          : null,
    },
  ];
}
