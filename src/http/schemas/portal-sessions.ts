/** Portal sessions: a company opens one for an account's end customer, and may end it at once. */
import { Type } from '@sinclair/typebox';
import { toIso } from '../../lib/clock.js';
import type { PortalSessionRow } from '../../store/types.js';
import { AccountParams, companyAuth, errorResponses, Timestamp } from './common.js';

const Scope = Type.Union([Type.Literal('read'), Type.Literal('topup')]);

const sessionFields = {
  session_id: Type.String({ description: 'ps_…; not a secret: the page of the session is /portal/{session_id}' }),
  account_id: Type.String(),
  scopes: Type.Array(Scope),
  return_url: Type.Union([Type.String(), Type.Null()]),
  frame_ancestors: Type.Array(Type.String(), { description: 'Origins that may frame the portal page' }),
  expires_at: Timestamp,
  created_at: Timestamp,
  revoked_at: Type.Union([Timestamp, Type.Null()]),
};

export const createPortalSessionSchema = {
  operationId: 'createPortalSession',
  tags: ['portal sessions'],
  summary: "Open the customer portal for an account's end customer",
  description:
    'Answers the session with its `url`, `{BILLING_PUBLIC_URL}/portal/{session_id}#{token}`: give it to the ' +
    'customer (a link, a redirect, an iframe of one of `frame_ancestors`). The token (pt_…) is in the fragment, ' +
    'so no server log sees it; it is shown only in this answer and stored only as a hash. `scopes`: `read` ' +
    '(balances, grants, usage, transactions, charges, receipts; the default) and `topup` (buying credit packs). ' +
    '`ttl_seconds` 60–86,400 (default 3,600). `return_url` and each `frame_ancestors` origin must be https:// ' +
    'or http://localhost.',
  security: companyAuth,
  params: AccountParams,
  body: Type.Object(
    {
      scopes: Type.Optional(Type.Array(Scope, { minItems: 1, maxItems: 2, uniqueItems: true })),
      ttl_seconds: Type.Optional(Type.Integer({ minimum: 60, maximum: 86_400 })),
      return_url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
      frame_ancestors: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 512 }), { maxItems: 10 })),
    },
    { additionalProperties: false },
  ),
  response: {
    201: Type.Object({
      data: Type.Object({
        ...sessionFields,
        url: Type.String({ description: 'The portal for the customer, its token in the fragment (shown once)' }),
      }),
    }),
    ...errorResponses(404),
  },
};

export const revokePortalSessionSchema = {
  operationId: 'revokePortalSession',
  tags: ['portal sessions'],
  summary: 'End a portal session at once',
  description:
    'Its token answers 401 from now on, and its page is no longer served framed. Ending an ended session ' +
    'answers it again; another company’s or an unknown one is 404 with param session_id.',
  security: companyAuth,
  params: Type.Object({ session_id: Type.String({ maxLength: 64 }) }),
  response: { 200: Type.Object({ data: Type.Object(sessionFields) }), ...errorResponses(404) },
};

export function presentPortalSession(s: PortalSessionRow) {
  return {
    session_id: s.sessionId,
    account_id: s.accountId,
    scopes: s.scopes,
    return_url: s.returnUrl,
    frame_ancestors: s.frameAncestors,
    expires_at: toIso(s.expiresAtMs),
    created_at: toIso(s.createdAtMs),
    revoked_at: s.revokedAtMs === null ? null : toIso(s.revokedAtMs),
  };
}
