/** Console sessions: log in (a cookie and a CSRF token), the current session, log out. */
import { Type } from '@sinclair/typebox';
import { Email, Timestamp } from './common.js';

const sessionCookie = [{ sessionCookie: [] }];

export const CompanySummary = Type.Object({
  company_id: Type.String(),
  name: Type.String(),
  processor: Type.String(),
  created_at: Timestamp,
});

const SessionData = {
  user: Type.Ref('User'),
  csrf_token: Type.String({ description: 'Send as X-CSRF-Token on every POST, PUT, PATCH and DELETE of the session' }),
  expires_at: Type.String({
    format: 'date-time',
    description: 'When the session ends without further requests (idle limit, at most 30 days after log-in)',
  }),
};

export const createSessionSchema = {
  operationId: 'createSession',
  tags: ['sessions'],
  summary: 'Log in (no credentials needed): a session cookie',
  description:
    'Sets the billing_session cookie (HttpOnly, SameSite=Lax, Path=/, Secure behind https). A request with it ' +
    'and no Authorization header acts as the user; on company routes as the company named by the Billing-Company ' +
    "header, which the user must own (another: 404). POST, PUT, PATCH and DELETE must send the session's " +
    'csrf_token in X-CSRF-Token (else 403 csrf_token_invalid, nothing changes). A session ends after ' +
    'BILLING_SESSION_IDLE_MINUTES without requests (default 720), 30 days after log-in, at log-out, or when the ' +
    'password is reset. Wrong email or password: 401. Failed attempts are limited per email and per client ' +
    'address (429 with Retry-After, the password then not even checked). Idempotency-Key is ignored here: ' +
    'each log-in is a new session.',
  body: Type.Object(
    { email: Email, password: Type.String({ minLength: 1, maxLength: 1024 }) },
    { additionalProperties: false },
  ),
  response: {
    201: Type.Object({ data: Type.Object(SessionData) }),
    400: Type.Ref('Error'),
    401: Type.Ref('Error'),
    429: Type.Ref('Error'),
  },
};

export const getSessionSchema = {
  operationId: 'getCurrentSession',
  tags: ['sessions'],
  summary: 'The current session (session cookie)',
  description:
    'The user, the CSRF token, when the session ends, and the companies the user owns. No live session: 401.',
  security: sessionCookie,
  response: {
    200: Type.Object({ data: Type.Object({ ...SessionData, companies: Type.Array(CompanySummary) }) }),
    401: Type.Ref('Error'),
  },
};

export const deleteSessionSchema = {
  operationId: 'deleteCurrentSession',
  tags: ['sessions'],
  summary: 'Log out (session cookie and X-CSRF-Token)',
  description: 'Revokes the session on the server (its cookie no longer works anywhere) and clears the cookie.',
  security: sessionCookie,
  response: {
    200: Type.Object({ data: Type.Object({ revoked: Type.Literal(true) }) }),
    401: Type.Ref('Error'),
    403: Type.Ref('Error'),
  },
};
