/**
 * What every route module receives from buildApp(). It lives apart from app.ts so that route
 * modules never import the file that imports them.
 */
import { fail } from '../domain/outcome.js';
import type { Deps } from '../operations/deps.js';
import type { ApiKeyCache } from '../operations/identity.js';
import type { IngestBatcher, SettleWriter } from '../operations/events.js';
import type { Readiness } from './readiness.js';

export interface RouteContext {
  deps: Deps;
  keys: ApiKeyCache;
  ingest: IngestBatcher;
  settle: SettleWriter;
  passwordRateLimit: { max: number; timeWindow: number };
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
