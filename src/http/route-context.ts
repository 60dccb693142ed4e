/**
 * What every route module receives from buildApp(). It lives apart from app.ts so that route
 * modules never import the file that imports them.
 */
import type { Deps } from '../operations/deps.js';
import type { ApiKeyCache } from '../operations/identity.js';
import type { IngestBatcher, SettleWriter } from '../operations/events.js';

export interface RouteContext {
  deps: Deps;
  keys: ApiKeyCache;
  ingest: IngestBatcher;
  settle: SettleWriter;
  passwordRateLimit: { max: number; timeWindow: number };
}

/** Route config of every route that takes a company's credentials (`company_id:api_key`). */
export const companyRoute = { auth: 'company' as const };
