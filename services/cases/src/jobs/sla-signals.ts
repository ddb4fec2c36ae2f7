// case.sla_warning and case.sla_overdue (docs/decisions.md §5, time-driven events). The
// due instants are set by every case write (cases.ts); the shared time signals
// emit each one once, with the case in its detail read shape.
import { recordSignals, type SignalDefinition } from '@lpm/shared/jobs/time-signals';
import type { CaseRecord } from '../data/case-entity.ts';
import type { Cases } from '../domain/cases.ts';

const active = (r: CaseRecord) => r.status === 'ativo';

export function slaSignals(cases: Cases): SignalDefinition<CaseRecord>[] {
  const signal = recordSignals('cases', (r: CaseRecord) => cases.detailOf(r));
  return [
    // A warning whose deadline has also passed (the service was down) is dropped: the overdue signal says more.
    signal(
      'case.sla_warning',
      'sla_warning_at',
      (r, now) => active(r) && !(r.sla_overdue_at && r.sla_overdue_at <= now),
    ),
    signal('case.sla_overdue', 'sla_overdue_at', active),
  ];
}
