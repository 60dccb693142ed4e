/**
 * Console sessions and the one-time links sent by email. A session id and a
 * token are 32 random bytes (base64url) shown once; only their SHA-256 is stored. Times come from
 * the injected clock, so the test clock moves sessions and links towards their expiry.
 */
import { randomBytes } from 'node:crypto';
import { fail } from '../domain/outcome.js';
import { sha256Hex } from '../lib/canonical.js';
import { hashPassword } from '../lib/password.js';
import type { CompanyRow, SessionRow, UserRow, UserTokenPurpose } from '../store/types.js';
import { DAY_MS } from '../domain/time.js';
import type { Command, Deps } from './deps.js';
import { PASSWORD_LENGTH_MIN, normalizeEmail, splitName } from './identity.js';

/** A session ends 30 days after it began, however active. */
export const SESSION_ABSOLUTE_MS = 30 * DAY_MS;
/** `last_seen_at` is written at most this often per session: most requests only read it. */
export const SESSION_TOUCH_INTERVAL_MS = 60_000;
export const EMAIL_VERIFICATION_TTL_MS = 7 * DAY_MS;
export const PASSWORD_RESET_TTL_MS = 60 * 60_000;

/** 32 bytes in base64url: 43 characters. */
const SECRET_PATTERN = /^[A-Za-z0-9_-]{43}$/;

function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** When the session ends if nothing else happens: idle limit after its last request, or its absolute end. */
export function sessionEndsAt(deps: Deps, s: SessionRow): number {
  return Math.min(s.lastSeenAtMs + deps.identity.sessionIdleMs, s.expiresAtMs);
}

/** A new session of the user: its id (the cookie's value, never stored) and its row. */
export async function createSession(deps: Deps, user: UserRow): Promise<{ id: string; session: SessionRow }> {
  const id = newSecret();
  const now = deps.clock.now();
  const session: SessionRow = {
    idHash: sha256Hex(id),
    userId: user.id,
    csrfToken: newSecret(),
    createdAtMs: now,
    lastSeenAtMs: now,
    expiresAtMs: now + SESSION_ABSOLUTE_MS,
    revokedAtMs: null,
  };
  await deps.store.write((tx) => tx.sessions.insertSession(session));
  return { id, session };
}

export interface LiveSession {
  session: SessionRow;
  user: UserRow;
  /** Whether the user belongs to the company asked about (false when none was). */
  member: boolean;
}

/**
 * The live session with this id and its user, and whether the user belongs to `companyId` (one
 * read); undefined when unknown, revoked or expired. Marks it seen, at most once a minute.
 */
export async function resolveSession(deps: Deps, id: string, companyId?: string): Promise<LiveSession | undefined> {
  if (!SECRET_PATTERN.test(id)) return undefined;
  const idHash = sha256Hex(id);
  const found = await deps.store.read(async (tx): Promise<LiveSession | undefined> => {
    const session = await tx.sessions.findSession(idHash);
    const user = session && (await tx.identity.findUserById(session.userId));
    if (!session || !user) return undefined;
    return {
      session,
      user,
      member: companyId !== undefined && (await tx.identity.isCompanyMember(companyId, user.id)),
    };
  });
  if (!found) return undefined;
  const now = deps.clock.now();
  if (found.session.revokedAtMs !== null || now >= sessionEndsAt(deps, found.session)) return undefined;
  if (now - found.session.lastSeenAtMs >= SESSION_TOUCH_INTERVAL_MS) {
    if (!(await deps.store.write((tx) => tx.sessions.touchSession(idHash, now)))) {
      // Revoked meanwhile (or touched by a concurrent request): read it again.
      const again = await deps.store.read((tx) => tx.sessions.findSession(idHash));
      if (!again || again.revokedAtMs !== null) return undefined;
      return { ...found, session: again };
    }
    return { ...found, session: { ...found.session, lastSeenAtMs: now } };
  }
  return found;
}

export async function revokeSession(deps: Deps, session: SessionRow): Promise<void> {
  await deps.store.write((tx) => tx.sessions.revokeSession(session.idHash, deps.clock.now()));
}

export async function listOwnedCompanies(deps: Deps, userId: number): Promise<CompanyRow[]> {
  return deps.store.read((tx) => tx.identity.listOwnedCompanies(userId));
}

// --- email links

async function issueToken(deps: Deps, userId: number, purpose: UserTokenPurpose, ttlMs: number): Promise<string> {
  const token = newSecret();
  const now = deps.clock.now();
  await deps.store.write((tx) =>
    tx.sessions.insertUserToken({
      tokenHash: sha256Hex(token),
      userId,
      purpose,
      createdAtMs: now,
      expiresAtMs: now + ttlMs,
      usedAtMs: null,
    }),
  );
  return token;
}

function invalidToken(): never {
  fail('token_invalid_or_expired', 'this link is unknown, has expired or was already used; ask for a new one', 'token');
}

/**
 * Issues a link that verifies the user's address (valid 7 days) and returns what sends it: the token
 * is stored before the request is answered, the message may go out after.
 */
export async function prepareVerificationEmail(deps: Deps, user: UserRow): Promise<() => Promise<void>> {
  const token = await issueToken(deps, user.id, 'verify_email', EMAIL_VERIFICATION_TTL_MS);
  const link = `${deps.identity.publicUrl}/verify-email?token=${token}`;
  return () =>
    deps.identity.email.send({
      to: user.email,
      subject: 'Verify your email address',
      text:
        `Hello ${splitName(user.name).firstName},\n\nTo confirm that ${user.email} is yours, open this link ` +
        `within 7 days:\n\n${link}\n\nIf you did not sign up, ignore this message.\n`,
    });
}

export async function verifyEmail(deps: Deps, token: string): Promise<Command<UserRow>> {
  return async (tx) => {
    const used = SECRET_PATTERN.test(token)
      ? await tx.sessions.useUserToken(sha256Hex(token), 'verify_email', deps.clock.now())
      : undefined;
    if (!used) invalidToken();
    await tx.identity.setEmailVerified(used.userId);
    const user = await tx.identity.findUserById(used.userId);
    if (!user) invalidToken();
    return user;
  };
}

/** Sends a reset link (valid 1 hour) when the email belongs to a user; says nothing either way. */
export async function requestPasswordReset(deps: Deps, email: string): Promise<void> {
  const user = await deps.store.read((tx) => tx.identity.findUserByEmail(normalizeEmail(email)));
  if (!user) return;
  const token = await issueToken(deps, user.id, 'reset_password', PASSWORD_RESET_TTL_MS);
  const link = `${deps.identity.publicUrl}/reset-password?token=${token}`;
  await deps.identity.email.send({
    to: user.email,
    subject: 'Reset your password',
    text:
      `Hello ${splitName(user.name).firstName},\n\nTo choose a new password, open this link within 1 hour:\n\n` +
      `${link}\n\nIf you did not ask for this, ignore this message: your password stays as it is.\n`,
  });
}

/**
 * Sets the new password with a reset token (used once), logs the user out everywhere, and marks the
 * address verified (the link reached it).
 */
export async function completePasswordReset(deps: Deps, token: string, password: string): Promise<Command<UserRow>> {
  if (password.length < PASSWORD_LENGTH_MIN)
    fail('password_too_short', `password must be at least ${PASSWORD_LENGTH_MIN} characters`, 'password');
  if (!SECRET_PATTERN.test(token)) invalidToken();
  const passwordHash = await hashPassword(password);
  return async (tx) => {
    const now = deps.clock.now();
    const used = await tx.sessions.useUserToken(sha256Hex(token), 'reset_password', now);
    if (!used) invalidToken();
    await tx.identity.setPasswordHash(used.userId, passwordHash);
    await tx.identity.setEmailVerified(used.userId);
    await tx.sessions.revokeUserSessions(used.userId, now);
    const user = await tx.identity.findUserById(used.userId);
    if (!user) invalidToken();
    return user;
  };
}
