// The event catalog: every event the platform sends, with its description, an
// example delivery and the JSON Schema of its payload.
import { h, heading, show } from './ui.js';

const json = (value) => h('pre', { class: 'json', tabindex: '0' }, JSON.stringify(value, null, 2));

export async function catalogView(ctx) {
  const types = await ctx.eventTypes();
  show(
    ctx.main,
    heading(2, 'Event catalog'),
    h(
      'p',
      {},
      `${types.length} events. Each delivery's body is the event; its data.object is the resource after the change.`,
    ),
    h(
      'ul',
      { class: 'catalog' },
      types.map((t) =>
        h(
          'li',
          {},
          h(
            'details',
            {},
            h('summary', {}, h('code', {}, t.type), ' — ', t.description),
            h('h4', {}, 'Example'),
            json(t.example),
            h('h4', {}, 'Schema'),
            json(t.schema),
          ),
        ),
      ),
    ),
  );
}
