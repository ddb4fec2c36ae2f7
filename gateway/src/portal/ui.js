// DOM helpers of the portal: elements are built with text nodes only (never HTML
// from a string), so nothing an answer holds can run as markup.

/** Names set as attributes, having no property of that name. */
const ATTRIBUTES = new Set(['for', 'role', 'tabindex']);

/** An element: `attrs` sets properties (`on*` as listeners, `aria-*`, `data-*` and ATTRIBUTES as attributes); children are nodes or text. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) el.addEventListener(name.slice(2), value);
    else if (name === 'class') el.className = value;
    else if (name.includes('-') || ATTRIBUTES.has(name)) el.setAttribute(name, value === true ? '' : String(value));
    else el[name] = value;
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

let fieldIds = 0;

/** A labelled control: the label names it for screen readers; `hint` is read after the label. */
export function field(label, control, hint) {
  const id = control.id || `f${++fieldIds}`;
  control.id = id;
  const hintEl = hint ? h('span', { class: 'hint', id: `${id}-hint` }, hint) : null;
  if (hintEl) control.setAttribute('aria-describedby', hintEl.id);
  return h('div', { class: 'field' }, h('label', { for: id }, label), control, hintEl);
}

/** A section's heading, focusable so a view change can move the focus to it. */
export const heading = (level, text) => h(`h${level}`, { tabindex: '-1' }, text);

/** Replaces what `main` shows and moves the focus to its first heading. */
export function show(main, ...children) {
  main.replaceChildren(...children.flat().filter(Boolean));
  (main.querySelector('h2') ?? main).focus();
}

/** Says `text` to screen readers (and shows it) without moving the focus. */
export function announce(text) {
  document.getElementById('alert').replaceChildren();
  document.getElementById('status').replaceChildren(h('p', {}, text));
}

/** Shows an error and has screen readers say it at once. */
export function alertError(text) {
  document.getElementById('status').replaceChildren();
  document.getElementById('alert').replaceChildren(h('p', { class: 'error' }, text));
}

export function clearMessages() {
  document.getElementById('status').replaceChildren();
  document.getElementById('alert').replaceChildren();
}

/**
 * A table with a caption and a header row; each row is a list of cells (nodes or text).
 * The roles are explicit: on a narrow screen the stylesheet lays rows out as cards,
 * and a table displayed as blocks loses its implicit roles in some browsers.
 */
export function table(caption, headers, rows) {
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { role: 'table' },
      h('caption', {}, caption),
      h(
        'thead',
        { role: 'rowgroup' },
        h(
          'tr',
          { role: 'row' },
          headers.map((x) => h('th', { scope: 'col', role: 'columnheader' }, x)),
        ),
      ),
      h(
        'tbody',
        { role: 'rowgroup' },
        rows.map((cells) =>
          h(
            'tr',
            { role: 'row' },
            cells.map((c, i) => h('td', { role: 'cell', 'data-label': headers[i] }, c)),
          ),
        ),
      ),
    ),
  );
}

export const button = (text, onclick, attrs = {}) => h('button', { type: 'button', onclick, ...attrs }, text);

/** An instant as the reader's locale writes it, with the ISO text in a <time>. */
export const time = (iso) => (iso ? h('time', { dateTime: iso }, new Date(iso).toLocaleString()) : '—');

/** A list of terms and their descriptions. */
export const details = (pairs) =>
  h(
    'dl',
    {},
    pairs.flatMap(([term, value]) => [h('dt', {}, term), h('dd', {}, value)]),
  );

/** A secret or token shown once, in a read-only box the reader can select and copy. */
export function shownOnce(label, value) {
  const input = h('input', { type: 'text', readOnly: true, value, class: 'secret' });
  return h('div', { class: 'once' }, field(label, input, 'Shown only this once: copy it now.'));
}
