/**
 * The web console (console/, built by Vite into console/dist) served by this server at `/`: hashed
 * assets under /assets/ cached for a year as immutable, and index.html (never cached) for every other
 * GET that accepts HTML and is not an API, docs or system path (the single-page app routes itself).
 * Unknown /v1 paths keep their JSON 404. The console is a client of the public /v1 API; none of
 * these routes appears in the OpenAPI document.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** console/dist, from src/http/ (tsx) and from dist/http/ (compiled) alike. */
export const CONSOLE_DIST = fileURLToPath(new URL('../../console/dist', import.meta.url));

/** Paths that belong to the API and the server, never to the console. */
const SERVER_PATH = /^\/(v1|docs|openapi\.json|healthz|readyz|metrics)(\/|$)/;

/** The page's own rules: scripts and styles from this origin only, no framing, no referrer to other sites. */
const PAGE_HEADERS = {
  'cache-control': 'no-cache',
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
};

/** True for the routes this module adds (the OpenAPI completeness test leaves them out). */
export function isConsoleRoute(url: string): boolean {
  return url === '/*' || url.startsWith('/assets/');
}

export async function registerConsole(app: FastifyInstance, root = CONSOLE_DIST): Promise<void> {
  const assets = join(root, 'assets');
  const index = join(root, 'index.html');
  await app.register(async (scope) => {
    if (existsSync(assets)) {
      await scope.register(fastifyStatic, {
        root: assets,
        prefix: '/assets/',
        // File names carry a content hash: a changed file is a new URL.
        maxAge: 31_536_000_000,
        immutable: true,
        index: false,
        decorateReply: false,
        schemaHide: true,
        preCompressed: true,
      });
    }
    scope.get('/*', { schema: { hide: true } }, async (request: FastifyRequest, reply: FastifyReply) => {
      const path = request.url.split('?')[0]!;
      const accept = request.headers.accept ?? '';
      if (SERVER_PATH.test(path) || !accept.includes('text/html')) return reply.callNotFound();
      let html: string;
      try {
        html = await readFile(index, 'utf8');
      } catch {
        return reply
          .code(503)
          .header('cache-control', 'no-cache')
          .type('text/plain; charset=utf-8')
          .send('The web console is not built: run `npm run build` (npm start does it), then reload.\n');
      }
      return reply.headers(PAGE_HEADERS).type('text/html; charset=utf-8').send(html);
    });
  });
}
