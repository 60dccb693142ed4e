/** Customer portal sessions: an account's end customer let into the portal by its company, until it ends. */

export type PortalScope = 'read' | 'topup';

export interface PortalSessionRow {
  sessionId: string;
  /** SHA-256 of the token (`pt_…`), hex. The token itself is shown once, in the session's url. */
  tokenHash: string;
  companyId: string;
  accountId: string;
  scopes: PortalScope[];
  returnUrl: string | null;
  /** Origins that may frame the portal's page (CSP frame-ancestors); none: it may not be framed. */
  frameAncestors: string[];
  expiresAtMs: number;
  revokedAtMs: number | null;
  createdAtMs: number;
}

export interface PortalSessionsReadTx {
  /** The session of a token's hash, live or not (the caller decides with the clock). */
  findPortalSessionByToken(tokenHash: string): Promise<PortalSessionRow | undefined>;
  /** A session by its id alone (ids are not secrets: the portal page's framing rules are read by it). */
  findPortalSessionById(sessionId: string): Promise<PortalSessionRow | undefined>;
  /** The company's session (another company's: undefined). */
  findPortalSession(companyId: string, sessionId: string): Promise<PortalSessionRow | undefined>;
}

export interface PortalSessionsTx extends PortalSessionsReadTx {
  insertPortalSession(row: PortalSessionRow): Promise<void>;
  /** Ends the company's session at `atMs` unless it was revoked before; false when it is not the company's. */
  revokePortalSession(companyId: string, sessionId: string, atMs: number): Promise<boolean>;
  /** Deletes at most `limit` sessions that ended (expired or revoked) before `endedBeforeMs`; returns how many. */
  deleteEndedPortalSessions(endedBeforeMs: number, limit: number): Promise<number>;
}
