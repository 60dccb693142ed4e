/**
 * The customer portal's page (`/portal/{session_id}`): `console/dist/portal.html`, the portal's own entry of the
 * console's build (its assets under /assets/ with the console's). The page reads its token from the url's fragment
 * (never sent to a server) and calls the portal's API with it. It may be framed only by the session's
 * `frame_ancestors` (CSP `frame-ancestors`; none given, or an unknown or ended session: `'none'`). Not part of the
 * OpenAPI document.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../operations/deps.js';
import { portalPageFrameAncestors } from '../operations/portal-sessions.js';
import { CONSOLE_DIST } from './console.js';

/** The page's rules: the console's, but framed by the session's origins (or nobody). */
export function portalPageHeaders(frameAncestors: readonly string[]): Record<string, string> {
  const ancestors = frameAncestors.length > 0 ? frameAncestors.join(' ') : "'none'";
  return {
    'cache-control': 'no-store',
    'content-security-policy':
      "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
      `connect-src 'self'; frame-ancestors ${ancestors}; base-uri 'none'; form-action 'self'`,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
  };
}

export function registerPortalPage(app: FastifyInstance, deps: Deps, root = CONSOLE_DIST): void {
  const page = join(root, 'portal.html');
  app.get<{ Params: { session_id: string } }>(
    '/portal/:session_id',
    { schema: { hide: true } },
    async (request, reply) => {
      const ancestors = await portalPageFrameAncestors(deps, request.params.session_id);
      let html: string;
      try {
        html = await readFile(page, 'utf8');
      } catch {
        return reply
          .code(503)
          .header('cache-control', 'no-cache')
          .type('text/plain; charset=utf-8')
          .send('The customer portal is not built: run `npm run build` (npm start does it), then reload.\n');
      }
      return reply.headers(portalPageHeaders(ancestors)).type('text/html; charset=utf-8').send(html);
    },
  );
}
