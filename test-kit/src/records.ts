// Records as the API answers them, for the tests of more than one suite.
import { OPEN_DEAL_UNSET_FIELDS } from '@lpm/shared/webhook-examples';

/**
 * A deal's fields, its currency aside, as POST /v1/deals answers them when only a
 * title was sent: the first phase of the default pipeline and nothing else set.
 */
export function dealDefaults() {
  return {
    value: null,
    phase: 'lead',
    probability: 10,
    status: 'ativo',
    expected_close_date: null,
    client_id: null,
    responsible_id: null,
    source: null,
    ...OPEN_DEAL_UNSET_FIELDS,
    previous_phase: null,
    phase_changed_at: null,
  };
}
