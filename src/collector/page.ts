import { createHash } from 'node:crypto';

/** The page's stylesheet, inline (no second request), allowed by its hash in the CSP. */
const STYLE = `
  :root { font: 14px/1.4 system-ui, sans-serif; color: #1d232a; background: #f6f7f9; }
  body { margin: 0 auto; padding: 1rem 1.5rem; max-width: 80rem; }
  h1 { font-size: 1.25rem; margin: 0 0 .25rem; }
  #state { font-size: .85rem; color: #5b6470; margin: 0 0 1rem; }
  #state[data-state="open"]::before { content: "\\25CF "; color: #1a7f37; }
  #state[data-state="closed"]::before { content: "\\25CF "; color: #b42318; }
  table { width: 100%; border-collapse: collapse; background: #fff; box-shadow: 0 1px 2px #0002; }
  th, td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid #e4e7eb; vertical-align: top; }
  th { font-size: .75rem; text-transform: uppercase; letter-spacing: .04em; color: #5b6470; }
  td.time { white-space: nowrap; font-variant-numeric: tabular-nums; color: #5b6470; }
  code { font: 12px ui-monospace, monospace; }
  .type { font-weight: 600; }
  .origin { font-size: .75rem; color: #5b6470; }
  .off { color: #8a6d00; }
  .webhook { display: block; margin: 0 0 .2rem; }
  .badge { display: inline-block; min-width: 5.5rem; padding: 0 .4rem; border-radius: .6rem; font-size: .75rem; text-align: center; color: #fff; }
  .badge[data-status="pending"] { background: #6b7280; }
  .badge[data-status="delivered"] { background: #1a7f37; }
  .badge[data-status="retrying"] { background: #b54708; }
  .badge[data-status="failed"] { background: #b42318; }
  .note { display: block; font-size: .75rem; color: #5b6470; }
  details summary { cursor: pointer; color: #5b6470; font-size: .75rem; }
  pre { margin: .25rem 0 0; max-width: 40rem; overflow: auto; }
  #empty td { text-align: center; color: #5b6470; padding: 2rem; }
`;

/** The page's script, inline, allowed by its hash in the CSP. */
const SCRIPT = `
  const rows = document.getElementById('events');
  const state = document.getElementById('state');

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
    for (const child of children) if (child !== undefined) node.append(child);
    return node;
  }

  function summary(m) {
    switch (m.type) {
      case 'track': return m.event;
      case 'page': case 'screen': return m.name || (m.properties && m.properties.path) || '';
      case 'group': return 'group ' + m.groupId;
      case 'alias': return m.previousId + ' \\u2192 ' + m.userId;
      case 'identify': return Object.keys(m.traits || {}).join(', ');
      default: return '';
    }
  }

  function render(view) {
    const m = view.message;
    const who = m.userId || m.anonymousId || '';
    const routing = view.routes.map((r) => el('div', r.forwarded ? {} : { class: 'off' }, r.destination + (r.forwarded ? ': forwarded' : ': not forwarded (' + r.reason + ')')));
    const hooks = view.webhooks.map((w) => el('span', { class: 'webhook' },
      el('span', { class: 'badge', 'data-status': w.status }, w.status), ' ', el('code', {}, w.url),
      w.attempts ? ' \\u00b7 ' + w.attempts + (w.attempts === 1 ? ' attempt' : ' attempts') + (w.httpStatus ? ', HTTP ' + w.httpStatus : '') : '',
      w.note ? el('span', { class: 'note' }, w.note) : undefined));
    return el('tr', { 'data-id': view.id, 'data-type': m.type },
      el('td', { class: 'time' }, new Date(view.receivedAt).toLocaleTimeString()),
      el('td', {}, view.source),
      el('td', {}, el('span', { class: 'type' }, m.type), ' ', summary(m), el('div', { class: 'origin' }, who + (view.origin === 'api' ? '' : ' \\u00b7 ' + view.origin)),
        el('details', {}, el('summary', {}, 'message'), el('pre', {}, el('code', {}, JSON.stringify(m, null, 2))))),
      el('td', {}, ...routing),
      el('td', {}, ...(hooks.length ? hooks : ['\\u2014'])));
  }

  function connect() {
    const source = new EventSource('events');
    source.onopen = () => { state.dataset.state = 'open'; state.textContent = 'connected: new events appear at the top'; };
    source.onerror = () => { state.dataset.state = 'closed'; state.textContent = 'disconnected: retrying…'; };
    source.onmessage = (event) => {
      const view = JSON.parse(event.data);
      const row = render(view);
      const old = rows.querySelector('tr[data-id="' + CSS.escape(view.id) + '"]');
      if (old) {
        const open = old.querySelector('details').open;
        row.querySelector('details').open = open;
        old.replaceWith(row);
      } else {
        document.getElementById('empty')?.remove();
        rows.prepend(row);
        while (rows.children.length > 200) rows.lastElementChild.remove();
      }
    };
  }
  connect();
`;

/**
 * The live debugger, served at `GET /`: one self-contained page that follows `GET /events`
 * (Server-Sent Events) and shows each event, where it was routed and each webhook's status.
 * Everything from the wire is inserted as text, never as HTML.
 */
export const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>batched-analytics collector: live events</title>
<style>${STYLE}</style>
</head>
<body>
<h1>Live events</h1>
<p id="state" data-state="connecting">connecting…</p>
<table>
  <thead><tr><th>Received</th><th>Source</th><th>Event</th><th>Routing</th><th>Webhooks</th></tr></thead>
  <tbody id="events"><tr id="empty"><td colspan="5">No events yet. Send some with the client.</td></tr></tbody>
</table>
<script>${SCRIPT}</script>
</body>
</html>
`;

/**
 * Headers of the page and its event stream. The CSP lets the page run only its own inline script
 * and style (by hash) and connect only to its own origin; with `frame-ancestors` and
 * `X-Frame-Options` no other site can frame it, and no referrer leaves it.
 */
export const PAGE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-security-policy': [
    "default-src 'none'",
    `script-src '${sha256(SCRIPT)}'`,
    `style-src '${sha256(STYLE)}'`,
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; '),
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
});

function sha256(text: string): string {
  return `sha256-${createHash('sha256').update(text).digest('base64')}`;
}
