// Descriptions and examples of the query and path parameters, by name, for the
// document: the route schemas give their types, enums and bounds.

export const PARAMETER_DOCS: Record<string, { description: string; example?: unknown }> = {
  delivery_id: { description: 'The delivery id (dlv_ prefix).', example: 'dlv_01jd3kb3c5e7g9j1m3p5r7t9v1' },
  page: { description: 'Page number, from 1.', example: 1 },
  limit: { description: 'Items per page, 1 to 100.', example: 20 },
  sort: {
    description:
      'One field to order by; a leading `-` sorts descending. Ties break by id; records without the field come last.',
    example: '-created_at',
  },
  status: { description: 'Only records with this status.' },
  phase: { description: 'Only records in this phase of the team.', example: 'proposta' },
  priority: { description: 'Only records with this priority.', example: 'alta' },
  type: { description: 'Only records of this type.' },
  segment: { description: 'Only clients of this segment.', example: 'vip' },
  search: {
    description: 'Case- and accent-insensitive substring (clients: name, e-mail, CPF, CNPJ; cases: title, number).',
    example: 'jose',
  },
  client_id: { description: 'Only records linked to this client.', example: 'cli_01jd3k8q5x0v7m2n4p6r8t0w2y' },
  case_id: { description: 'Only records linked to this case.', example: 'case_01jd3k9a1b2c3d4e5f6g7h8j9k' },
  deal_id: { description: 'Only records linked to this deal.', example: 'deal_01jd3k7w2m4q6s8u0x2z4b6d8f' },
  responsible_id: {
    description: 'Only records with this responsible user.',
    example: 'user_01jd3k6e8g0j2m4p6r8t0w2y4a',
  },
  assigned_to: { description: 'Only activities assigned to this user.', example: 'user_01jd3k6e8g0j2m4p6r8t0w2y4a' },
  source: { description: 'Only deals from this source.', example: 'indicacao' },
  min_value: { description: 'Only deals worth at least this value.', example: 1000 },
  max_value: { description: 'Only deals worth at most this value.', example: 100000 },
  from: {
    description:
      'First day of the range, inclusive (YYYY-MM-DD): deals and cases by creation day in the team time zone, activities by due_date, financial records by date.',
    example: '2026-11-01',
  },
  to: { description: 'Last day of the range, inclusive (YYYY-MM-DD).', example: '2026-11-30' },
  overdue: { description: 'true: only pending or in_progress activities whose due moment has passed.', example: true },
  category: { description: 'Only records of this category.', example: 'honorarios' },
  group_by: { description: 'The summary buckets: by_day, by_week (ISO weeks) or by_month.', example: 'month' },
  currency: { description: 'The one currency summed (ISO 4217 code).', example: 'BRL' },
};
