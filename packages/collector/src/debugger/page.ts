import { createHash } from 'node:crypto';
import { MESSAGE_TYPES } from 'batched-analytics/internal';
import { SCRIPT } from './page/script.js';
import { STYLE } from './page/style.js';

/** A page of the collector's: its title after the collector's name, its inline style, its body. */
export function htmlDocument(title: string, style: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>batched-analytics collector: ${title}</title>
<style>${style}</style>
</head>
<body>
${body}
</body>
</html>
`;
}

/**
 * The live debugger, served at `GET /`: one self-contained page that follows `GET /events`
 * (Server-Sent Events): each event with its own status and each webhook's, filters and search
 * kept in the URL, counters, and a detail view (`GET /events/:id`) with the exact request sent.
 */
export const PAGE = htmlDocument(
  'live events',
  STYLE,
  `<h1>Live events</h1>
<p id="state" data-state="connecting">connecting…</p>
<form id="filters" role="search">
  <label>Source <select name="source"><option value="">all</option></select></label>
  <label>Type <select name="type"><option value="">all</option>${MESSAGE_TYPES.map((type) => `<option>${type}</option>`).join('')}<option>delete</option></select></label>
  <label>Status <select name="status"><option value="">all</option><option>delivered</option><option>retrying</option><option>pending</option><option>failed</option><option>not forwarded</option></select></label>
  <label>Search <input name="q" type="search" placeholder="userId, anonymousId, messageId, event"></label>
  <button type="button" id="pause" aria-pressed="false">Pause</button>
</form>
<div class="counters">
  <div class="scroll"><table><caption>Per source</caption><thead><tr><th>Source</th><th>Delivered</th><th>Retrying</th><th>Failed</th><th>Last minute</th></tr></thead><tbody id="by-source"></tbody></table></div>
  <div class="scroll"><table><caption>Per webhook</caption><thead><tr><th>URL</th><th>Delivered</th><th>Retrying</th><th>Failed</th><th>Last minute</th></tr></thead><tbody id="by-webhook"></tbody></table></div>
</div>
<div class="scroll"><table id="log">
  <thead><tr><th>Received</th><th>Source</th><th>Event</th><th>Routing</th><th>Status</th><th>Webhooks</th></tr></thead>
  <tbody id="events"><tr id="empty"><td colspan="6">No events yet. Send some with the client.</td></tr></tbody>
</table></div>
<section id="receivers" hidden aria-labelledby="receivers-title">
  <h2 id="receivers-title">Failing receivers</h2>
  <div class="scroll"><table><thead><tr><th>Source</th><th>URL</th><th>State</th><th></th></tr></thead><tbody id="urls"></tbody></table></div>
  <h3>Alerts</h3>
  <ol id="alerts" reversed></ol>
</section>
<p id="no-match" hidden>No event matches these filters. Clear them to see every event.</p>
<p><button type="button" id="older">Load older events</button></p>
<aside id="detail" hidden aria-labelledby="detail-title">
  <header><h2 id="detail-title">Event</h2><button type="button" id="close" aria-label="Close the detail (Escape)">Close</button></header>
  <div class="body"></div>
</aside>
<script>${SCRIPT}</script>`,
);

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

/** The CSP source of an inline script or style: its SHA-256. */
export function sha256(text: string): string {
  return `sha256-${createHash('sha256').update(text).digest('base64')}`;
}
