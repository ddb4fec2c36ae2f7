// The portal's entry: takes the session's token from the URL's fragment (then drops
// it from the address bar, so it is not copied or shown along with the URL), keeps
// it for this tab only, and shows the endpoints. Any 401 ends the session: the page
// then shows why, and no data.
import { api, SessionEnded, useToken } from './api.js';
import { alertError, clearMessages, h, heading, show } from './ui.js';
import { endpointsView } from './endpoints.js';
import { endpointView } from './endpoint.js';
import { catalogView } from './catalog.js';

const main = document.getElementById('main');
const nav = document.querySelector('nav');
const sessionId = new URLSearchParams(location.search).get('session') ?? 'default';
const storageKey = `lpm-portal:${sessionId}`;

const VIEWS = { endpoints: endpointsView, endpoint: endpointView, catalog: catalogView };

let catalog = null;

const ctx = {
  main,
  /** Shows a view; `arg` is what it needs (an endpoint's id). */
  go: (view, arg) =>
    ctx.run(async () => {
      clearMessages();
      for (const b of nav.querySelectorAll('button')) {
        if (b.dataset.view === (view === 'endpoint' ? 'endpoints' : view)) b.setAttribute('aria-current', 'page');
        else b.removeAttribute('aria-current');
      }
      await VIEWS[view](ctx, arg);
    }),
  /** Runs an action: a 401 ends the session, any other refusal is said as an alert. */
  async run(action) {
    try {
      await action();
    } catch (e) {
      if (e instanceof SessionEnded) ended();
      else alertError(e instanceof Error ? e.message : String(e));
    }
  },
  /** The event catalog, read once. */
  async eventTypes() {
    catalog ??= (await api('GET', '/v1/webhooks/event-types')).data;
    return catalog;
  },
};

function ended() {
  sessionStorage.removeItem(storageKey);
  useToken(null);
  nav.hidden = true;
  clearMessages();
  show(
    main,
    h(
      'section',
      { class: 'ended', 'aria-labelledby': 'ended-title' },
      h('h2', { id: 'ended-title', tabindex: '-1' }, 'This portal session has ended'),
      h('p', {}, 'The link has expired or was revoked, so nothing of the team is shown here.'),
      h('p', {}, "Ask your team's administrator for a new portal link."),
    ),
  );
}

function start() {
  const fromFragment = new URLSearchParams(location.hash.slice(1)).get('token');
  if (fromFragment) {
    sessionStorage.setItem(storageKey, fromFragment);
    history.replaceState(null, '', `${location.pathname}${location.search}`);
  }
  const token = fromFragment ?? sessionStorage.getItem(storageKey);
  if (!token) {
    show(main, heading(2, 'No portal session'), h('p', {}, 'Open this page with the link of a portal session.'));
    return;
  }
  useToken(token);
  nav.hidden = false;
  for (const b of nav.querySelectorAll('button')) b.addEventListener('click', () => ctx.go(b.dataset.view));
  void ctx.go('endpoints');
}

start();
