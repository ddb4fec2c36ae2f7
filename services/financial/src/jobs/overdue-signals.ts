// financial.overdue (docs/decisions.md §5, time-driven events): once per record when its
// due date has passed unpaid. The due instant (overdue_at) is set by every write
// (domain/financial.ts); the shared time signals emit it once, with the record in
// its detail read shape, whatever the number of replicas.
import { recordSignals, type SignalDefinition } from '@lpm/shared/jobs/time-signals';
import type { FinancialRecord } from '../data/financial-entity.ts';
import type { Financial } from '../domain/financial.ts';

export function overdueSignals(financial: Financial): SignalDefinition<FinancialRecord>[] {
  const signal = recordSignals('financial_records', (r: FinancialRecord) => financial.detailOf(r));
  return [signal('financial.overdue', 'overdue_at', (r) => r.status === 'pending')];
}
