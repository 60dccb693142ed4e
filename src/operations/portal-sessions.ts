/**
 * Customer portal sessions (contract "Customer portal, top-ups and receipts"): a company lets one account's end
 * customer into the portal. The token (`pt_…`, 32 base62 characters ≈ 190 bits) is shown once, in the fragment of
 * the session's url (so no server log sees it), and stored only as its SHA-256: a portal request is one lookup by
 * that digest, and an unknown token and a wrong one are the same miss. A session answers until `expires_at` or its
 * revocation, for its own account only.
 */
import { fail } from '../domain/outcome.js';
import { sha256Hex } from '../lib/canonical.js';
import { newId, newSecret } from '../lib/ids.js';
import type { PortalScope, PortalSessionRow } from '../store/types.js';
import type { Command, Deps } from './deps.js';
import { ownedAccount } from './lookups.js';

export const PORTAL_TTL_DEFAULT_S = 3_600;
export const PORTAL_TOKEN_PREFIX = 'pt_';
/** `pt_` and 32 base62 characters: anything else is refused before any lookup. */
const TOKEN_PATTERN = /^pt_[0-9A-Za-z]{32}$/;

/** What `POST /v1/accounts/{id}/portal_sessions` takes (ranges and the scope names are the schema's). */
export interface PortalSessionInput {
  scopes?: PortalScope[];
  ttl_seconds?: number;
  return_url?: string;
  frame_ancestors?: string[];
}

/** `https://…`, or `http://localhost…` (a developer's machine): anything else may not receive the customer. */
function allowedUrl(text: string): URL | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  if (url.username !== '' || url.password !== '') return null;
  if (url.protocol === 'https:') return url;
  return url.protocol === 'http:' && url.hostname === 'localhost' ? url : null;
}

/** A frame origin: scheme, host and port only (what CSP frame-ancestors compares). */
function frameOrigin(text: string, param: string): string {
  const url = allowedUrl(text);
  if (url === null || url.origin !== text.replace(/\/$/, ''))
    fail(
      'frame_ancestor_not_an_origin',
      `${param} must be an origin, https://host[:port] or http://localhost[:port]`,
      param,
    );
  return url.origin;
}

/** A new session of the company's account: its row, and the url that carries its token. */
export function createPortalSession(
  deps: Deps,
  companyId: string,
  accountId: string,
  input: PortalSessionInput,
): Command<{ session: PortalSessionRow; url: string }> {
  const scopes = [...new Set(input.scopes ?? ['read'])].sort() as PortalScope[];
  const frameAncestors = [
    ...new Set((input.frame_ancestors ?? []).map((o, i) => frameOrigin(o, `frame_ancestors[${i}]`))),
  ];
  let returnUrl: string | null = null;
  if (input.return_url !== undefined) {
    const url = allowedUrl(input.return_url);
    if (url === null) fail('portal_url_not_allowed', 'return_url must be https://… or http://localhost…', 'return_url');
    returnUrl = url.href;
  }
  return async (tx) => {
    await ownedAccount(tx, companyId, accountId);
    const now = deps.clock.now();
    const token = newSecret(PORTAL_TOKEN_PREFIX);
    const session: PortalSessionRow = {
      sessionId: newId('ps'),
      tokenHash: sha256Hex(token),
      companyId,
      accountId,
      scopes,
      returnUrl,
      frameAncestors,
      expiresAtMs: now + (input.ttl_seconds ?? PORTAL_TTL_DEFAULT_S) * 1000,
      revokedAtMs: null,
      createdAtMs: now,
    };
    await tx.portalSessions.insertPortalSession(session);
    return { session, url: `${deps.identity.publicUrl}/portal/${session.sessionId}#${token}` };
  };
}

/** Ends the company's session at once; 404 `session_id` for another company's or an unknown one. */
export function revokePortalSession(deps: Deps, companyId: string, sessionId: string): Command<PortalSessionRow> {
  return async (tx) => {
    const now = deps.clock.now();
    if (!(await tx.portalSessions.revokePortalSession(companyId, sessionId, now)))
      fail('not_found', `no such portal session: ${sessionId}`, 'session_id');
    return (await tx.portalSessions.findPortalSession(companyId, sessionId))!;
  };
}

/** Whether the session answers at `nowMs` (not expired, not revoked). */
export function portalSessionLive(s: PortalSessionRow, nowMs: number): boolean {
  return s.revokedAtMs === null && nowMs < s.expiresAtMs;
}

/** The live session of a portal token; undefined for a malformed, unknown, wrong, expired or revoked one. */
export async function resolvePortalToken(deps: Deps, token: string): Promise<PortalSessionRow | undefined> {
  if (!TOKEN_PATTERN.test(token)) return undefined;
  const s = await deps.store.read((tx) => tx.portalSessions.findPortalSessionByToken(sha256Hex(token)));
  return s !== undefined && portalSessionLive(s, deps.clock.now()) ? s : undefined;
}

/**
 * The origins that may frame the page of a session (`/portal/{session_id}`): its `frame_ancestors` while it is
 * live; none for an unknown or ended one.
 */
export async function portalPageFrameAncestors(deps: Deps, sessionId: string): Promise<string[]> {
  const s = await deps.store.read((tx) => tx.portalSessions.findPortalSessionById(sessionId));
  return s !== undefined && portalSessionLive(s, deps.clock.now()) ? s.frameAncestors : [];
}

/** What the portal shows first: its account, the company's name, the balances as they are now. */
export async function getPortalAccount(deps: Deps, s: PortalSessionRow) {
  const nowMs = deps.clock.now();
  return deps.store.read(async (tx) => {
    const [account, company] = await Promise.all([
      ownedAccount(tx, s.companyId, s.accountId),
      tx.identity.findCompany(s.companyId),
    ]);
    if (!company) throw new Error(`portal session ${s.sessionId}: its company is gone`);
    return { account, company, balances: await deps.ledger.viewAccounts(tx, [s.accountId], nowMs), nowMs };
  });
}
