// An endpoint's delivery log: filtered by status and event type, or found by event
// id; each delivery opens to its attempts (status, duration, the receiver's answer
// as kept: its first 4 KiB), and a delivery not pending can be sent again.
import { api, query } from './api.js';
import { announce, button, field, h, table, time } from './ui.js';

const STATUSES = ['pending', 'succeeded', 'failed', 'skipped'];
const LIMIT = 20;

export async function deliveriesSection(ctx, id, types) {
  const status = h(
    'select',
    { name: 'status' },
    h('option', { value: '' }, 'Any status'),
    STATUSES.map((s) => h('option', { value: s }, s)),
  );
  const eventType = h(
    'select',
    { name: 'event_type' },
    h('option', { value: '' }, 'Any event'),
    types.map((t) => h('option', { value: t.type }, t.type)),
  );
  const eventId = h('input', { type: 'search', name: 'event_id', placeholder: 'evt_…' });
  const list = h('div', { class: 'deliveries' });
  const state = { page: 1 };
  const load = async () => {
    const filters = { status: status.value, event_type: eventType.value, event_id: eventId.value.trim() };
    const answer = await api(
      'GET',
      `/v1/webhooks/${id}/deliveries${query({ ...filters, page: state.page, limit: LIMIT, sort: '-created_at' })}`,
    );
    list.replaceChildren(...render(ctx, id, answer, state, load));
  };
  const form = h(
    'form',
    {
      class: 'filters',
      role: 'search',
      'aria-label': 'Filter deliveries',
      onsubmit: (e) => {
        e.preventDefault();
        state.page = 1;
        void ctx.run(async () => {
          await load();
          announce('Deliveries filtered');
        });
      },
    },
    field('Status', status),
    field('Event type', eventType),
    field('Event id', eventId),
    h(
      'p',
      {},
      h('button', { type: 'submit' }, 'Show deliveries'),
      ' ',
      button('Refresh', () => ctx.run(load)),
    ),
  );
  await load();
  return h('section', { 'aria-labelledby': 's-deliveries' }, h('h3', { id: 's-deliveries' }, 'Deliveries'), form, list);
}

function render(ctx, id, { data, pagination }, state, load) {
  if (data.length === 0) return [h('p', {}, 'No delivery matches.')];
  const rows = data.map((d) => [
    d.test ? h('span', {}, d.event_type, ' ', h('span', { class: 'badge test' }, 'test')) : d.event_type,
    h('code', {}, d.event_id),
    h('span', { class: `badge ${d.status}` }, d.status),
    String(d.attempts_count),
    time(d.created_at),
    h(
      'span',
      { class: 'row-actions' },
      attemptsToggle(d),
      d.status === 'pending'
        ? null
        : button(
            'Retry',
            () =>
              ctx.run(async () => {
                await api('POST', `/v1/webhooks/${id}/deliveries/${d.id}/retry`);
                await load();
                announce(`Delivery of ${d.event_id} sent again`);
              }),
            { 'aria-label': `Retry ${d.event_type} ${d.event_id}` },
          ),
    ),
  ]);
  const pages = pagination?.pages ?? 1;
  const move = (page) => () =>
    ctx.run(async () => {
      state.page = page;
      await load();
      announce(`Page ${page} of ${pages}`);
    });
  return [
    table(
      `Deliveries, page ${state.page} of ${pages} (${pagination?.total ?? data.length} in all)`,
      ['Event', 'Event id', 'Status', 'Attempts', 'Created', 'Actions'],
      rows,
    ),
    h(
      'nav',
      { class: 'pager', 'aria-label': 'Delivery pages' },
      button('Previous page', move(state.page - 1), { disabled: state.page <= 1 }),
      button('Next page', move(state.page + 1), { disabled: state.page >= pages }),
    ),
  ];
}

/** A button that shows or hides the delivery's attempts below its row. */
function attemptsToggle(d) {
  const panelId = `attempts-${d.id}`;
  const toggle = button(
    'Attempts',
    () => {
      const row = toggle.closest('tr');
      const open = document.getElementById(panelId);
      if (open) {
        open.remove();
        toggle.setAttribute('aria-expanded', 'false');
        return;
      }
      const cell = h('td', { colSpan: 6 }, attemptsTable(d));
      row.after(h('tr', { id: panelId, class: 'attempts-row' }, cell));
      toggle.setAttribute('aria-expanded', 'true');
    },
    { 'aria-expanded': 'false', 'aria-controls': panelId, 'aria-label': `Attempts of ${d.event_type} ${d.event_id}` },
  );
  return toggle;
}

function attemptsTable(d) {
  if (d.attempts.length === 0)
    return h('p', {}, d.next_attempt_at ? ['No attempt yet; the first at ', time(d.next_attempt_at)] : 'No attempt.');
  const rows = d.attempts.map((a) => [
    String(a.attempt),
    time(a.at),
    a.success ? 'Succeeded' : 'Failed',
    a.status_code === null ? (a.error_class ?? '—') : String(a.status_code),
    `${a.latency_ms} ms`,
    a.response_body ? h('pre', { class: 'answer' }, a.response_body) : '—',
  ]);
  return [
    table(
      `Attempts of ${d.event_id}`,
      ['#', 'At', 'Result', 'Status', 'Duration', "Receiver's answer (first 4 KiB)"],
      rows,
    ),
    d.next_attempt_at ? h('p', {}, 'Next attempt at ', time(d.next_attempt_at)) : null,
  ];
}
