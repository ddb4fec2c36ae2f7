// One endpoint: what it is, its actions (edit, disable or enable, delete, rotate the
// secret, send a test event, recover since a time) and its delivery log.
import { api } from './api.js';
import { announce, button, details, field, h, heading, show, shownOnce, time } from './ui.js';
import {
  chosenEvents,
  eventsFieldset,
  eventsText,
  RATE_LIMIT_HINT,
  RATE_LIMIT_LABEL,
  rateLimitInput,
  rateLimitOf,
  statusText,
  successRate24h,
} from './endpoints.js';
import { deliveriesSection } from './deliveries.js';

export async function endpointView(ctx, id) {
  const [{ data: hook }, rate] = await Promise.all([api('GET', `/v1/webhooks/${id}`), successRate24h(id)]);
  const types = await ctx.eventTypes();
  const reopen = (message) => async () => {
    await endpointView(ctx, id);
    announce(message);
  };
  show(
    ctx.main,
    h(
      'p',
      {},
      button('← All endpoints', () => ctx.go('endpoints')),
    ),
    heading(2, `Endpoint ${hook.url}`),
    details([
      ['URL', h('span', { class: 'url' }, hook.url)],
      ['Status', statusText(hook)],
      ['Events', eventsText(hook.events)],
      ['Description', hook.description ?? '—'],
      ['Rate limit', hook.rate_limit ? `${hook.rate_limit} deliveries a second` : 'None'],
      ['Success (24 h)', rate],
      ['Secret rotated', time(hook.secret_rotated_at)],
      ['Previous secret signs until', time(hook.previous_secret_expires_at)],
    ]),
    h(
      'div',
      { class: 'actions' },
      button('Edit', () => ctx.run(() => editView(ctx, hook, types))),
      button(hook.active ? 'Disable' : 'Enable', () =>
        ctx.run(async () => {
          await api('PUT', `/v1/webhooks/${id}`, { active: !hook.active });
          await reopen(hook.active ? 'Endpoint disabled' : 'Endpoint enabled')();
        }),
      ),
      button(
        'Delete',
        () =>
          ctx.run(async () => {
            if (!confirm(`Delete the endpoint ${hook.url} and its delivery log?`)) return;
            await api('DELETE', `/v1/webhooks/${id}`);
            await ctx.go('endpoints');
            announce('Endpoint deleted');
          }),
        { class: 'danger' },
      ),
    ),
    rotateSection(ctx, id),
    testSection(ctx, id, types, hook),
    recoverSection(ctx, id),
    await deliveriesSection(ctx, id, types),
  );
}

function editView(ctx, hook, types) {
  const url = h('input', { type: 'url', name: 'url', required: true, value: hook.url });
  const description = h('input', { type: 'text', name: 'description', maxLength: 1000, value: hook.description ?? '' });
  const rateLimit = rateLimitInput(hook.rate_limit);
  const form = h(
    'form',
    {
      onsubmit: (e) => {
        e.preventDefault();
        void ctx.run(async () => {
          const events = chosenEvents(form);
          if (events.length === 0) throw new Error('Choose at least one event');
          const body = { events, description: description.value.trim() || null, rate_limit: rateLimitOf(rateLimit) };
          if (url.value.trim() !== hook.url) body.url = url.value.trim();
          await api('PUT', `/v1/webhooks/${hook.id}`, body);
          await endpointView(ctx, hook.id);
          announce('Endpoint saved');
        });
      },
    },
    field('URL', url),
    field('Description (optional)', description),
    field(RATE_LIMIT_LABEL, rateLimit, RATE_LIMIT_HINT),
    eventsFieldset(types, hook.events),
    h(
      'p',
      {},
      h('button', { type: 'submit', class: 'primary' }, 'Save'),
      ' ',
      button('Cancel', () => ctx.go('endpoint', hook.id)),
    ),
  );
  show(ctx.main, heading(2, `Edit ${hook.url}`), form);
}

/** A titled section holding a form that runs `submit` (through ctx.run). */
function formSection(ctx, title, controls, label, submit) {
  const out = h('div', { class: 'result' });
  const titleId = `s-${title.toLowerCase().replace(/\W+/g, '-')}`;
  return h(
    'section',
    { 'aria-labelledby': titleId },
    h('h3', { id: titleId }, title),
    h(
      'form',
      {
        onsubmit: (e) => {
          e.preventDefault();
          void ctx.run(() => submit(out));
        },
      },
      controls,
      h('p', {}, h('button', { type: 'submit' }, label)),
    ),
    out,
  );
}

/** A section whose form POSTs `body()` to `path`, then shows the nodes `shows` makes of the answer and announces `done`. */
function postSection(ctx, title, controls, label, { path, body, shows, done }) {
  return formSection(ctx, title, controls, label, async (out) => {
    const { data } = await api('POST', path, body());
    out.replaceChildren(...shows(data));
    announce(done);
  });
}

function rotateSection(ctx, id) {
  const hours = h('input', { type: 'number', min: 0, max: 72, value: 24, inputMode: 'numeric' });
  const control = field('Hours the old secret keeps signing', hours, '0 to 72; both secrets sign during that time.');
  return postSection(ctx, 'Rotate the secret', control, 'Rotate secret', {
    path: `/v1/webhooks/${id}/secret/rotate`,
    body: () => ({ previous_expires_in_hours: Number(hours.value) }),
    shows: (data) => [
      shownOnce('New signing secret', data.secret),
      h('p', {}, 'The previous secret signs until ', time(data.previous_secret_expires_at), '.'),
    ],
    done: 'Secret rotated',
  });
}

function testSection(ctx, id, types, hook) {
  const wanted = hook.events.includes('*') ? types.map((t) => t.type) : hook.events;
  const event = h(
    'select',
    {},
    types.map((t) => h('option', { value: t.type, selected: t.type === wanted[0] }, t.type)),
  );
  const control = field('Event', event, "The catalog's example, signed, with test: true.");
  return postSection(ctx, 'Send a test event', control, 'Send test event', {
    path: `/v1/webhooks/${id}/test`,
    body: () => ({ event: event.value }),
    shows: (data) => [
      h(
        'p',
        {},
        `Test ${event.value} sent${data?.event_id ? ` (event ${data.event_id})` : ''}. It shows in the delivery log.`,
      ),
    ],
    done: 'Test event sent',
  });
}

function recoverSection(ctx, id) {
  const since = h('input', { type: 'datetime-local', required: true });
  const until = h('input', { type: 'datetime-local' });
  const controls = [
    field('Since', since, 'At most 14 days back, in your time zone.'),
    field('Until (optional)', until),
  ];
  return formSection(ctx, 'Recover failed deliveries', controls, 'Recover', async (out) => {
    const body = {
      since: new Date(since.value).toISOString(),
      ...(until.value ? { until: new Date(until.value).toISOString() } : {}),
    };
    let { data } = await api('POST', `/v1/webhooks/${id}/recover`, body);
    const progress = () =>
      out.replaceChildren(
        h('p', {}, `Recovery ${data.id} ${data.status}: ${data.queued} of ${data.total} deliveries queued again.`),
      );
    progress();
    announce('Recovery started');
    // Its progress, read again each second for a minute at most; then the log tells the rest.
    for (let i = 0; i < 60 && data.status !== 'completed'; i++) {
      await new Promise((done) => setTimeout(done, 1000));
      if (!out.isConnected) return;
      ({ data } = await api('GET', `/v1/webhooks/${id}/recoveries/${data.id}`));
      progress();
    }
    if (data.status === 'completed') announce(`Recovery completed: ${data.queued} deliveries queued again`);
  });
}
