/**
 * Alias spellings of routes: the spec's workflow guide and older clients write some paths
 * differently (`auto_refill` for `autorefill`, `/plan` for `/plans`, no `/v1` prefix). Each alias
 * is answered by rewriting its URL to the canonical route before routing, so it runs the same
 * handler, validation and idempotency (an Idempotency-Key is shared by both spellings). Aliases
 * are not routes: the OpenAPI document lists only the canonical path and names its aliases in
 * the operation's `x-aliases`, so generated clients get one method per operation.
 */

export interface Alias {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** The alias path, with `{param}` placeholders. */
  alias: string;
  /** The canonical path it answers for, with the same placeholders. */
  canonical: string;
}

export const ALIASES: readonly Alias[] = [
  // The spec's auto-refill path is `autorefill`; the guide spells it `auto_refill`.
  {
    method: 'PUT',
    alias: '/v1/accounts/{account_id}/balance/{denomination}/auto_refill',
    canonical: '/v1/accounts/{account_id}/balance/{denomination}/autorefill',
  },
  // The spec and the contract create a plan at `/plan`; `/plans`, the path that lists them, works too.
  { method: 'POST', alias: '/v1/companies/{company_id}/plans', canonical: '/v1/companies/{company_id}/plan' },
  // The guide's spellings without `/v1`.
  { method: 'PUT', alias: '/accounts/{account_id}/auto_refill', canonical: '/v1/accounts/{account_id}/auto_refill' },
  {
    method: 'PUT',
    alias: '/accounts/{account_id}/balance/{denomination}/auto_refill',
    canonical: '/v1/accounts/{account_id}/balance/{denomination}/autorefill',
  },
  {
    method: 'PUT',
    alias: '/accounts/{account_id}/balance/{denomination}/autorefill',
    canonical: '/v1/accounts/{account_id}/balance/{denomination}/autorefill',
  },
  { method: 'POST', alias: '/accounts/{account_id}/card', canonical: '/v1/accounts/{account_id}/card' },
  { method: 'POST', alias: '/accounts/{account_id}/events', canonical: '/v1/accounts/{account_id}/events' },
  { method: 'POST', alias: '/events', canonical: '/v1/events' },
];

const PARAM = /\{([a-z_]+)\}/g;

interface CompiledAlias {
  method: string;
  pattern: RegExp;
  canonical: string;
}

/** A path parameter: one segment, as the router would take it. */
const SEGMENT = '([^/?#]+)';

function compile(a: Alias): CompiledAlias {
  const escaped = a.alias.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
  return {
    method: a.method,
    // An optional trailing slash, as on every route (ignoreTrailingSlash).
    pattern: new RegExp(`^${escaped.replace(PARAM, SEGMENT)}/?$`),
    canonical: a.canonical,
  };
}

const COMPILED = ALIASES.map(compile);

/**
 * Fastify's `rewriteUrl`: the canonical URL of an alias (query string kept), or the URL as it
 * came. Costs one prefix test for `/v1/…` URLs that are no alias (every hot route).
 */
export function rewriteAlias(method: string | undefined, url: string | undefined): string {
  if (url === undefined || method === undefined) return url ?? '/';
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  if (path.startsWith('/v1/')) {
    const bare = path.endsWith('/') ? path.slice(0, -1) : path;
    if (!bare.endsWith('/auto_refill') && !bare.endsWith('/plans')) return url;
  }
  for (const a of COMPILED) {
    if (a.method !== method) continue;
    const m = a.pattern.exec(path);
    if (!m) continue;
    let i = 1;
    const rewritten = a.canonical.replace(PARAM, () => m[i++]!);
    return q === -1 ? rewritten : rewritten + url.slice(q);
  }
  return url;
}

/** The aliases of each canonical operation, keyed `METHOD /path/{param}`. */
export function aliasesByOperation(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const a of ALIASES) {
    const key = `${a.method} ${a.canonical}`;
    out.set(key, [...(out.get(key) ?? []), a.alias]);
  }
  return out;
}
