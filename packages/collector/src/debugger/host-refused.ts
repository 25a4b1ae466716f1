import { htmlDocument } from './page.js';
import { SIGN_IN_HEADERS } from './sign-in.js';
import { SIGN_IN_STYLE } from './page/sign-in-style.js';

/**
 * What a browser gets at the live page under a host name the collector does not answer to (not its
 * own address, not in `allowedHosts`): what to change, rather than a JSON error. Typical after
 * `--host 0.0.0.0`, opened at the machine's address or name.
 * @param name the host name from the request's `Host` header, without its port; shown escaped.
 */
export function hostRefusedPage(name: string): string {
  const shown = escapeHtml(name);
  return htmlDocument(
    'unknown host',
    SIGN_IN_STYLE,
    `<main>
<h1>Live events: unknown host</h1>
<p>This collector's live page does not answer to the host <code>${shown}</code>: it answers only to its own address and to the names in the config's <code>allowedHosts</code>, so that another web site cannot read it through a name of its own (DNS rebinding).</p>
<p>To open the page here, add <code>${shown}</code> to <code>allowedHosts</code> in the config file and restart the collector. On the collector's own machine, its loopback address (<code>127.0.0.1</code>) works as it is.</p>
</main>`,
  );
}

/** Its headers: the sign-in page's (the same style, no script). */
export const HOST_REFUSED_HEADERS = SIGN_IN_HEADERS;

const ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ENTITIES[char]!);
}
