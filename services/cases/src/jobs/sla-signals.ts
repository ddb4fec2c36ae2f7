// case.sla_warning and case.sla_overdue (docs/decisions.md §5, time-driven events). The
// due instants are set by every case write (cases.ts); the shared time signals
// emit each one once, with the case in its detail read shape.
import { newEvent } from '@lpm/shared/events';
import type { SignalDefinition } from '@lpm/shared/jobs/time-signals';
import type { CaseRecord } from '../data/case-entity.ts';
import type { Cases } from '../domain/cases.ts';

export function slaSignals(cases: Cases): SignalDefinition<CaseRecord>[] {
  return [
    {
      type: 'case.sla_warning',
      collection: 'cases',
      dueField: 'sla_warning_at',
      // A warning whose deadline has also passed (the service was down) is dropped: the overdue signal says more.
      event: async (r, now) =>
        r.status === 'ativo' && !(r.sla_overdue_at && r.sla_overdue_at <= now)
          ? newEvent('case.sla_warning', r.team_id, await cases.detailOf(r), null, null)
          : null,
    },
    {
      type: 'case.sla_overdue',
      collection: 'cases',
      dueField: 'sla_overdue_at',
      event: async (r) =>
        r.status === 'ativo' ? newEvent('case.sla_overdue', r.team_id, await cases.detailOf(r), null, null) : null,
    },
  ];
}
