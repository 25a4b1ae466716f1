/**
 * The live debugger's script, inline, allowed by its hash in the CSP. Everything from the wire is
 * inserted as text, never as HTML. Filters live in the URL's query, so a filtered view can be shared.
 */
export const SCRIPT = `
  const events = new Map();
  const rows = document.getElementById('events');
  const state = document.getElementById('state');
  const form = document.getElementById('filters');
  const detail = document.getElementById('detail');
  const pauseButton = document.getElementById('pause');
  const FILTERS = ['source', 'type', 'status', 'q'];
  // Rows the page holds at most: the collector keeps as many (historyEvents) by default.
  const MAX_ROWS = 10000;
  const olderButton = document.getElementById('older');
  const noMatch = document.getElementById('no-match');
  let paused = false;
  let held = [];
  let openId;
  let opener;

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
    for (const child of children) if (child !== undefined && child !== null) node.append(child);
    return node;
  }

  // What a sender wrote, isolated: a bidi control in it (U+202E) cannot reorder the text around it.
  function own(text) {
    return el('bdi', {}, String(text));
  }

  function summary(m) {
    switch (m.type) {
      case 'track': return [own(m.event)];
      case 'page': case 'screen': return [own(m.name || (m.properties && m.properties.path) || '')];
      case 'group': return ['group ', own(m.groupId)];
      case 'alias': return [own(m.previousId), ' → ', own(m.userId)];
      case 'identify': return (m.traitNames || Object.keys(m.traits || {})).flatMap((name, i) => i === 0 ? [own(name)] : [', ', own(name)]);
      default: return [];
    }
  }

  function countdown(at) {
    const seconds = Math.max(0, Math.ceil((Date.parse(at) - Date.now()) / 1000));
    return seconds === 0 ? 'next attempt now' : 'next attempt in ' + seconds + ' s';
  }

  function render(view) {
    const m = view.message;
    const who = m.userId || m.anonymousId || '';
    const status = view.status;
    const origin = view.origin === 'api' ? '' : ' · ' + view.origin;
    const routing = view.routes.map((r) => el('div', r.forwarded ? {} : { class: 'off' }, r.destination + (r.forwarded ? ': forwarded' : ': not forwarded (' + r.reason + ')')));
    const hooks = view.webhooks.map((w) => el('span', { class: 'webhook' },
      el('span', { class: 'badge', 'data-status': w.status }, w.status), ' ', el('code', {}, w.url),
      w.attempts ? ' · ' + w.attempts + (w.attempts === 1 ? ' attempt' : ' attempts') + (w.httpStatus ? ', HTTP ' + w.httpStatus : '') : '',
      w.note ? el('span', { class: 'note' }, w.note) : undefined,
      w.filter ? el('span', { class: 'note filter' }, 'filter: ' + w.filter) : undefined,
      w.status === 'retrying' && w.nextAttemptAt ? el('span', { class: 'note countdown', 'data-at': w.nextAttemptAt }, countdown(w.nextAttemptAt)) : undefined));
    const row = el('tr', { 'data-id': view.id, 'data-type': m.type, 'data-status': status, tabindex: '0' },
      el('td', { class: 'time' }, new Date(view.receivedAt).toLocaleTimeString()),
      el('td', {}, view.source),
      el('td', {}, el('span', { class: 'type' }, m.type), ' ', el('span', { class: 'summary' }, ...summary(m)), el('div', { class: 'origin' }, who === '' ? '' : own(who), origin)),
      el('td', {}, ...routing),
      el('td', {}, el('span', { class: 'badge message-status', 'data-status': status }, status)),
      el('td', {}, ...(hooks.length ? hooks : ['—'])));
    row.hidden = !matches(view);
    return row;
  }

  function filters() {
    const params = new URLSearchParams(location.search);
    return Object.fromEntries(FILTERS.map((name) => [name, params.get(name) || '']));
  }

  function matches(view) {
    const f = filters();
    const m = view.message;
    if (f.source && view.source !== f.source) return false;
    if (f.type && m.type !== f.type) return false;
    if (f.status && view.status !== f.status) return false;
    if (f.q) {
      const q = f.q.toLowerCase();
      const fields = [m.userId, m.anonymousId, m.messageId, m.event, m.previousId];
      if (!fields.some((value) => typeof value === 'string' && value.toLowerCase().includes(q))) return false;
    }
    return true;
  }

  function refilter() {
    for (const row of rows.querySelectorAll('tr[data-id]')) row.hidden = !matches(events.get(row.dataset.id));
    showNoMatch();
  }

  // Events are shown, yet the filters hide every one: say so rather than show an empty table.
  function showNoMatch() {
    noMatch.hidden = !rows.querySelector('tr[data-id]') || !!rows.querySelector('tr[data-id]:not([hidden])');
  }

  function syncForm() {
    const f = filters();
    for (const name of FILTERS) form.elements[name].value = f[name];
  }

  function addOption(select, value) {
    if ([...select.options].some((option) => option.value === value)) return;
    select.append(el('option', { value }, value));
  }

  function remember(view) {
    events.set(view.id, view);
    addOption(form.elements.source, view.source);
    if (filters().source === view.source) form.elements.source.value = view.source;
  }

  function apply(view) {
    remember(view);
    const row = render(view);
    const old = rows.querySelector('tr[data-id="' + CSS.escape(view.id) + '"]');
    if (old) old.replaceWith(row);
    else {
      document.getElementById('empty')?.remove();
      // Newest first by acceptance: events other collectors accepted may arrive after newer ones.
      let next = rows.firstElementChild;
      while (next && events.get(next.dataset.id)?.receivedAt > view.receivedAt) next = next.nextElementSibling;
      rows.insertBefore(row, next);
      while (rows.children.length > MAX_ROWS) {
        events.delete(rows.lastElementChild.dataset.id);
        rows.lastElementChild.remove();
      }
    }
    renderCounters();
    showNoMatch();
    if (openId === view.id) showDetail(view.id);
  }

  // Per source and per webhook URL, over the events this page holds.
  function renderCounters() {
    const minuteAgo = Date.now() - 60000;
    const tally = (key, map, status, at) => {
      const entry = map.get(key) || { delivered: 0, retrying: 0, failed: 0, skipped: 0, pending: 0, lastMinute: 0 };
      if (status in entry) entry[status] += 1;
      if (at >= minuteAgo) entry.lastMinute += 1;
      map.set(key, entry);
    };
    const sources = new Map();
    const urls = new Map();
    for (const view of events.values()) {
      const at = Date.parse(view.receivedAt);
      tally(view.source, sources, view.status, at);
      for (const w of view.webhooks) tally(w.url, urls, w.status, at);
    }
    const table = (id, map) => {
      const body = document.getElementById(id);
      body.replaceChildren(...[...map].map(([key, c]) => el('tr', { 'data-key': key },
        el('td', {}, el('code', {}, key)), el('td', { class: 'num delivered' }, String(c.delivered)), el('td', { class: 'num retrying' }, String(c.retrying)),
        el('td', { class: 'num failed' }, String(c.failed)), el('td', { class: 'num rate' }, c.lastMinute + '/min'))));
    };
    table('by-source', sources);
    table('by-webhook', urls);
  }

  async function showDetail(id) {
    openId = id;
    const response = await fetch('events/' + encodeURIComponent(id));
    if (openId !== id) return;
    const body = detail.querySelector('.body');
    if (!response.ok) {
      const why = response.status === 401 ? 'Your session has ended: reload the page to sign in again.' : 'This event is no longer kept.';
      body.replaceChildren(el('p', {}, why));
      detail.hidden = false;
      return;
    }
    const d = await response.json();
    const view = d.event;
    const attempts = d.attempts.map((a) => el('tr', {},
      el('td', { class: 'time' }, new Date(a.at).toLocaleTimeString()), el('td', {}, el('code', {}, a.url)),
      el('td', { class: 'num' }, String(a.attempt)), el('td', {}, a.status ? 'HTTP ' + a.status : '—'), el('td', { class: 'num' }, a.durationMs + ' ms'), el('td', {}, a.error || '')));
    const requests = d.requests.map((r) => el('div', { class: 'request' }, el('h3', {}, 'POST ', el('code', {}, r.url)),
      el('pre', { class: 'headers' }, Object.entries(r.headers).map(([k, v]) => k + ': ' + v).join('\\n'))));
    body.replaceChildren(
      el('p', {}, el('span', { class: 'badge', 'data-status': view.status }, view.status), ' ', view.source, ' · ', view.message.type, ' ', ...summary(view.message),
        view.replayOf ? el('span', { class: 'note' }, 'sent again from event ' + view.replayOf) : undefined,
        view.duplicateOf ? el('span', { class: 'note' }, 'a duplicate of the message first accepted at ' + new Date(view.duplicateOf.firstAcceptedAt).toLocaleString() + ': not forwarded') : undefined),
      el('h2', {}, 'Accepted message'), el('pre', { class: 'message' }, JSON.stringify(view.message, null, 2)),
      ...(d.body === undefined ? [el('p', {}, 'Not forwarded: no webhook request was made.')] : [
        el('h2', {}, 'Body sent (exact bytes)'), el('pre', { class: 'sent-body' }, d.body),
        el('h2', {}, 'Requests'), ...requests,
        d.signature ? el('p', { class: 'signature' }, 'X-Signature ', el('code', {}, d.signature.value), ': ' + d.signature.how + '.') : el('p', {}, 'No X-Signature: the source has no sharedSecret.'),
        d.standardWebhooks ? el('p', { class: 'standard-webhooks' }, 'Standard Webhooks: ' + d.standardWebhooks.how + '.') : undefined,
        el('button', { type: 'button', id: 'replay' }, 'Send again'), el('span', { id: 'replay-result', class: 'note' }),
      ]),
      el('h2', {}, 'Attempts'),
      attempts.length ? el('table', { class: 'attempts' }, el('thead', {}, el('tr', {}, ...['Started', 'URL', 'Attempt', 'Status', 'Took', 'Error'].map((h) => el('th', {}, h)))), el('tbody', {}, ...attempts))
        : el('p', {}, 'No request yet.'));
    detail.querySelector('h2#detail-title').textContent = 'Event ' + view.id;
    detail.hidden = false;
    detail.querySelector('#close').focus();
  }

  function closeDetail() {
    openId = undefined;
    detail.hidden = true;
    if (opener) opener.focus();
  }

  // The page's own credentials (the session cookie, or none on loopback) go with the request; a
  // refusal shows the collector's message here: the page never asks for a token itself.
  async function replay() {
    const result = detail.querySelector('#replay-result');
    result.textContent = ' sending…';
    const response = await fetch('v1/deliveries/' + encodeURIComponent(openId) + '/replay', { method: 'POST' }).catch(() => undefined);
    const answer = response ? await response.json().catch(() => ({})) : { error: 'the collector did not answer' };
    result.textContent = response && response.ok ? ' queued as event ' + answer.id : ' ' + (answer.error || 'HTTP ' + response.status);
    if (response && response.status === 401) result.append(' ', el('a', { href: 'sign-in' }, 'Sign in with the adminToken'));
  }

  // Pages back through the collector's history, below the rows already shown.
  async function loadOlder() {
    const oldest = rows.lastElementChild && rows.lastElementChild.dataset.id;
    if (!oldest) return;
    const response = await fetch('history?before=' + encodeURIComponent(oldest) + '&limit=200');
    const page = await response.json();
    for (const view of page.events) {
      if (events.has(view.id)) continue;
      remember(view);
      rows.append(render(view));
    }
    olderButton.hidden = !page.more;
    renderCounters();
    showNoMatch();
  }
  olderButton.addEventListener('click', loadOlder);

  rows.addEventListener('click', (event) => {
    const row = event.target.closest('tr[data-id]');
    if (row) { opener = row; showDetail(row.dataset.id); }
  });
  rows.addEventListener('keydown', (event) => {
    const row = event.target.closest('tr[data-id]');
    if (row && event.key === 'Enter') { opener = row; showDetail(row.dataset.id); }
  });
  document.addEventListener('keydown', (event) => { if (event.key === 'Escape' && !detail.hidden) closeDetail(); });
  detail.addEventListener('click', (event) => {
    if (event.target.id === 'close') closeDetail();
    if (event.target.id === 'replay') replay();
  });
  form.addEventListener('input', () => {
    const params = new URLSearchParams();
    for (const name of FILTERS) if (form.elements[name].value) params.set(name, form.elements[name].value);
    const query = params.toString();
    history.replaceState(null, '', query ? '?' + query : location.pathname);
    refilter();
  });
  form.addEventListener('submit', (event) => event.preventDefault());
  pauseButton.addEventListener('click', () => {
    paused = !paused;
    pauseButton.textContent = paused ? 'Resume' : 'Pause';
    pauseButton.setAttribute('aria-pressed', String(paused));
    if (!paused) { for (const view of held) apply(view); held = []; }
    state.dataset.state = paused ? 'paused' : 'open';
    state.textContent = paused ? 'paused: new events are held until you resume' : 'connected: new events appear at the top';
  });
  setInterval(() => {
    for (const node of document.querySelectorAll('.countdown')) node.textContent = countdown(node.dataset.at);
  }, 1000);

  const f = filters();
  if (f.source) addOption(form.elements.source, f.source);
  syncForm();

  // Failing and disabled webhook URLs, and the alerts raised: read every few seconds.
  const receivers = document.getElementById('receivers');
  const urlRows = document.getElementById('urls');
  const alertList = document.getElementById('alerts');
  async function loadReceivers() {
    const response = await fetch('webhooks').catch(() => undefined);
    if (!response || !response.ok) return;
    const { urls, alerts } = await response.json();
    const when = (ms) => new Date(ms).toLocaleString();
    const last = (u) => u.lastStatus ? ' (last: HTTP ' + u.lastStatus + ')' : u.lastError ? ' (last: ' + u.lastError + ')' : '';
    urlRows.replaceChildren(...urls.filter((u) => u.disabledAt || u.failingSince).map((u) => el('tr', { 'data-source': u.source, 'data-url': u.url, 'data-state': u.disabledAt ? 'disabled' : 'failing' },
      el('td', {}, u.source), el('td', {}, el('code', {}, u.url)),
      el('td', {}, u.disabledAt ? 'disabled since ' + when(u.disabledAt) + last(u) : 'failing since ' + when(u.failingSince) + last(u)),
      el('td', {}, u.disabledAt ? el('button', { type: 'button', class: 'enable' }, 'Enable') : '', el('span', { class: 'enable-result' })))));
    alertList.replaceChildren(...alerts.slice().reverse().map((a) => el('li', { 'data-type': a.type },
      new Date(a.timestamp).toLocaleString() + ' ', el('strong', {}, a.type), ' ' + a.data.source + ' ', el('code', {}, a.data.url),
      a.data.messageId ? ' messageId ' + a.data.messageId : '', a.data.lastStatus ? ' HTTP ' + a.data.lastStatus : a.data.lastError ? ' ' + a.data.lastError : '')));
    receivers.hidden = urlRows.children.length === 0 && alertList.children.length === 0;
  }
  urlRows.addEventListener('click', async (event) => {
    if (!event.target.classList.contains('enable')) return;
    const row = event.target.closest('tr');
    const result = row.querySelector('.enable-result');
    result.textContent = ' enabling…';
    const response = await fetch('v1/webhooks/enable', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ source: row.dataset.source, url: row.dataset.url }) }).catch(() => undefined);
    const answer = response ? await response.json().catch(() => ({})) : { error: 'the collector did not answer' };
    if (response && response.ok) return loadReceivers();
    result.textContent = ' ' + (answer.error || 'HTTP ' + response.status);
    if (response && response.status === 401) result.append(' ', el('a', { href: 'sign-in' }, 'Sign in with the adminToken'));
  });
  loadReceivers();
  setInterval(loadReceivers, 2000);

  const source = new EventSource('events');
  source.onopen = () => { if (!paused) { state.dataset.state = 'open'; state.textContent = 'connected: new events appear at the top'; } };
  source.onerror = () => { state.dataset.state = 'closed'; state.textContent = 'disconnected: retrying…'; };
  source.onmessage = (event) => {
    const view = JSON.parse(event.data);
    if (paused) {
      held = held.filter((h) => h.id !== view.id);
      held.push(view);
      state.textContent = 'paused: ' + held.length + ' update(s) held until you resume';
    } else apply(view);
  };
`;
