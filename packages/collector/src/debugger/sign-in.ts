import { htmlDocument, PAGE_HEADERS, sha256 } from './page.js';
import { SIGN_IN_STYLE } from './page/sign-in-style.js';

/**
 * The live page's sign-in form, served at `GET /` to a browser that must sign in: the token goes to
 * `POST session` (relative, so that a proxy's path prefix is kept), which sets the session cookie
 * and sends the browser back to the page. No script: it works with the page's strict CSP.
 * @param error shown above the form after a token that was refused.
 */
export function signInPage(error?: string): string {
  return htmlDocument(
    'sign in',
    SIGN_IN_STYLE,
    `<main>
<h1>Live events: sign in</h1>
<p>This collector shows its messages to its operators only. Enter the config's <code>adminToken</code> (reads and sends again) or <code>readToken</code> (reads).</p>
${error === undefined ? '' : `<p id="sign-in-error" role="alert">${error}</p>`}
<form id="sign-in" method="post" action="session">
  <label>Token <input name="token" type="password" autocomplete="current-password" required autofocus></label>
  <button type="submit">Sign in</button>
</form>
</main>`,
  );
}

/** The sign-in page's headers: the page's, but its form may post to its own origin, and its own style. */
export const SIGN_IN_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  ...PAGE_HEADERS,
  'content-security-policy': ["default-src 'none'", `style-src '${sha256(SIGN_IN_STYLE)}'`, "form-action 'self'", "base-uri 'none'", "frame-ancestors 'none'"].join('; '),
});
