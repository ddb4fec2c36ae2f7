// Records as the API answers them, for the tests of more than one suite.

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
    description: null,
    labels: [] as string[],
    metadata: {},
    final_value: null,
    won_at: null,
    loss_reason: null,
    competitor: null,
    lost_at: null,
    archived_at: null,
    previous_phase: null,
    phase_changed_at: null,
  };
}
