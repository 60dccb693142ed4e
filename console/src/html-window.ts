/** How long a page's Blob URL lives: the new window has loaded it long before (a reload after that fails). */
const PAGE_URL_MS = 5 * 60_000;

/**
 * Opens an HTML page the app fetched with its own credentials (a receipt: its route wants the console's session or
 * the portal's token, which a link cannot send) in a new window, from a Blob URL. A blob: document is of this
 * page's origin and inherits its Content-Security-Policy, which lets the page's own inline stylesheet apply
 * (style-src 'unsafe-inline') and would run no inline script. The new window is cut from this one (no opener).
 * False when the browser blocked the window.
 */
export function openHtmlWindow(html: string): boolean {
  const url = URL.createObjectURL(new Blob([html], { type: 'text/html;charset=utf-8' }));
  setTimeout(() => URL.revokeObjectURL(url), PAGE_URL_MS);
  const w = window.open(url, '_blank');
  if (!w) return false;
  w.opener = null;
  return true;
}

export const POPUP_BLOCKED = 'The browser blocked the new window: allow pop-ups for this site and try again.';
