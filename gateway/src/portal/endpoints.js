// The endpoints: a table with each one's status, events and success rate over the
// last 24 hours, and the form that adds one.
import { api, query } from './api.js';
import { announce, button, field, h, heading, show, shownOnce, table } from './ui.js';

const DAY_MS = 86_400_000;

/** Successful attempts / attempts over the last 24 h, from the endpoint's latest 100 deliveries; test sends count apart, so not here. */
export async function successRate24h(id) {
  const { data } = await api('GET', `/v1/webhooks/${id}/deliveries${query({ limit: 100, sort: '-created_at' })}`);
  const since = Date.now() - DAY_MS;
  const attempts = data
    .filter((d) => !d.test)
    .flatMap((d) => d.attempts)
    .filter((a) => Date.parse(a.at) >= since);
  if (attempts.length === 0) return 'No attempts';
  const ok = attempts.filter((a) => a.success).length;
  // A busier endpoint had more than its latest 100 deliveries in the day: say what was counted.
  const partial =
    data.length === 100 && Date.parse(data[data.length - 1].created_at) >= since ? ' (latest 100 deliveries)' : '';
  return `${((ok / attempts.length) * 100).toFixed(1)}% of ${attempts.length} attempt${attempts.length === 1 ? '' : 's'}${partial}`;
}

export const statusText = (hook) => (hook.active ? 'Active' : 'Disabled');
export const eventsText = (events) => (events.includes('*') ? 'All events' : events.join(', '));

export async function endpointsView(ctx) {
  const { data: hooks } = await api('GET', '/v1/webhooks');
  const rates = await Promise.all(hooks.map((hook) => successRate24h(hook.id)));
  const rows = hooks.map((hook, i) => [
    h('span', { class: 'url' }, hook.url),
    h('span', { class: hook.active ? 'badge ok' : 'badge off' }, statusText(hook)),
    eventsText(hook.events),
    rates[i],
    button('Manage', () => ctx.go('endpoint', hook.id), { 'aria-label': `Manage ${hook.url}` }),
  ]);
  show(
    ctx.main,
    heading(2, 'Endpoints'),
    h(
      'p',
      {},
      button('Add an endpoint', () => ctx.run(() => createView(ctx)), { class: 'primary' }),
    ),
    hooks.length
      ? table('Endpoints of the team', ['URL', 'Status', 'Events', 'Success (24 h)', 'Actions'], rows)
      : h('p', {}, 'No endpoint yet.'),
  );
}

/** Checkboxes of the catalog's events, plus "all events"; `selected` checks some. */
export function eventsFieldset(types, selected = []) {
  const all = h('input', { type: 'checkbox', name: 'events', value: '*', checked: selected.includes('*') });
  const boxes = types.map((t) =>
    h(
      'label',
      { class: 'check' },
      h('input', { type: 'checkbox', name: 'events', value: t.type, checked: selected.includes(t.type) }),
      ` ${t.type}`,
    ),
  );
  return h(
    'fieldset',
    { class: 'events' },
    h('legend', {}, 'Events'),
    h('label', { class: 'check all' }, all, ' All events, present and future'),
    h('div', { class: 'checks' }, boxes),
  );
}

/** The events a form's checkboxes choose. */
export function chosenEvents(form) {
  const chosen = [...form.querySelectorAll('input[name="events"]:checked')].map((b) => b.value);
  return chosen.includes('*') ? ['*'] : chosen;
}

/** The optional deliveries-per-second limit: its input, and the value a body sends (null: no limit). */
export function rateLimitInput(value) {
  return h('input', {
    type: 'number',
    name: 'rate_limit',
    min: 1,
    max: 1000,
    step: 1,
    inputMode: 'numeric',
    value: value ?? '',
  });
}
export const rateLimitOf = (input) => (input.value.trim() === '' ? null : Number(input.value));
export const RATE_LIMIT_LABEL = 'Deliveries per second at most (optional)';
export const RATE_LIMIT_HINT = '1 to 1000; deliveries above it wait, none is dropped. Empty: no limit.';

async function createView(ctx) {
  const types = await ctx.eventTypes();
  const url = h('input', {
    type: 'url',
    name: 'url',
    required: true,
    placeholder: 'https://example.com/webhooks',
    autocomplete: 'url',
  });
  const description = h('input', { type: 'text', name: 'description', maxLength: 1000 });
  const rateLimit = rateLimitInput(null);
  const form = h(
    'form',
    {
      onsubmit: (e) => {
        e.preventDefault();
        void ctx.run(async () => {
          const body = {
            url: url.value.trim(),
            events: chosenEvents(form),
            description: description.value.trim() || null,
            rate_limit: rateLimitOf(rateLimit),
          };
          if (body.events.length === 0) throw new Error('Choose at least one event');
          const { data } = await api('POST', '/v1/webhooks', body);
          show(
            ctx.main,
            heading(2, 'Endpoint added'),
            h('p', {}, `Deliveries to ${data.url} are signed with this secret.`),
            shownOnce('Signing secret', data.secret),
            h(
              'p',
              {},
              button('Manage this endpoint', () => ctx.go('endpoint', data.id)),
              ' ',
              button('Back to endpoints', () => ctx.go('endpoints')),
            ),
          );
          announce('Endpoint added');
        });
      },
    },
    field('URL', url, 'An HTTPS address; it must answer a signed ping within 5 seconds.'),
    field('Description (optional)', description),
    field(RATE_LIMIT_LABEL, rateLimit, RATE_LIMIT_HINT),
    eventsFieldset(types),
    h(
      'p',
      {},
      h('button', { type: 'submit', class: 'primary' }, 'Add endpoint'),
      ' ',
      button('Cancel', () => ctx.go('endpoints')),
    ),
  );
  show(ctx.main, heading(2, 'Add an endpoint'), form);
}
