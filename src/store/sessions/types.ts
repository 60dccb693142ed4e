/** Sessions and one-time user tokens: who is logged in to the console, and the links sent by email. */

export interface SessionRow {
  /** SHA-256 of the session id, hex. The id itself (the cookie's value) is never stored. */
  idHash: string;
  userId: number;
  csrfToken: string;
  createdAtMs: number;
  lastSeenAtMs: number;
  /** The absolute end; the idle limit (after `lastSeenAtMs`) is the server's setting. */
  expiresAtMs: number;
  revokedAtMs: number | null;
}

export type UserTokenPurpose = 'verify_email' | 'reset_password';

export interface UserTokenRow {
  /** SHA-256 of the token, hex. */
  tokenHash: string;
  userId: number;
  purpose: UserTokenPurpose;
  createdAtMs: number;
  expiresAtMs: number;
  usedAtMs: number | null;
}

export interface SessionsReadTx {
  findSession(idHash: string): Promise<SessionRow | undefined>;
}

export interface SessionsTx extends SessionsReadTx {
  insertSession(row: SessionRow): Promise<void>;
  /** Moves `last_seen_at` forward on a live session; false when it is revoked or unknown. */
  touchSession(idHash: string, atMs: number): Promise<boolean>;
  /** Returns false when no such live session exists. */
  revokeSession(idHash: string, atMs: number): Promise<boolean>;
  /** Revokes every live session of the user; returns how many. */
  revokeUserSessions(userId: number, atMs: number): Promise<number>;
  insertUserToken(row: UserTokenRow): Promise<void>;
  /**
   * Marks the token used and returns it, in one statement: only when it has this purpose, was not
   * used and has not expired at `atMs`. Two concurrent uses: one gets the row, the other undefined.
   */
  useUserToken(tokenHash: string, purpose: UserTokenPurpose, atMs: number): Promise<UserTokenRow | undefined>;
}
