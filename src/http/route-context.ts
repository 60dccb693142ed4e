/**
 * What every route module receives from buildApp(). It lives apart from app.ts so that route
 * modules never import the file that imports them.
 */
import { fail } from '../domain/outcome.js';
import type { Deps } from '../operations/deps.js';
import type { ApiKeyCache } from '../operations/identity.js';
import type { BalanceReads } from '../operations/balances.js';
import type { EventWriters } from '../operations/events.js';
import type { EntitlementChecks } from '../operations/features.js';
import type { Readiness } from './readiness.js';
import type { AttemptLimiter } from './attempts.js';

export interface RouteContext {
  deps: Deps;
  keys: ApiKeyCache;
  /** Ingest requests and settles, group-committed; checks, group-read. */
  events: EventWriters;
  /** Balance reads, group-read. */
  balances: BalanceReads;
  /** Entitlement checks, group-read. */
  entitlements: EntitlementChecks;
  /** Failed password attempts, per email and per client address (auth.ts checkPassword). */
  attempts: AttemptLimiter;
  /** @fastify/rate-limit of sign-ups per client address (false: BILLING_SIGNUP_LIMIT_PER_MINUTE=0). */
  signupRateLimit: { max: number; timeWindow: number } | false;
  /** @fastify/rate-limit per client address of the routes that send email without credentials. */
  perAddressRateLimit: { max: number; timeWindow: number };
  /** Password-reset emails per address (the email's), however many client addresses ask. */
  passwordResetsPerEmail: AttemptLimiter;
  /** False with BILLING_SIGNUP=closed: users and companies are created by an operator (the CLI). */
  signupOpen: boolean;
  /** What GET /readyz answers; absent: always ready. */
  readiness?: Readiness;
}

/** BILLING_SIGNUP=closed: open sign-up and company registration are refused (403 forbidden). */
export function refuseSignUp(): never {
  fail('signup_closed', 'sign-up is closed on this server: its operator creates users and companies (billing CLI)');
}

/** Route config of every route that takes a company's credentials (`company_id:api_key`). */
export const companyRoute = { auth: 'company' as const };
