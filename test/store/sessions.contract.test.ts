// Guarantees: on SQLite and PostgreSQL, sessions are found by the hash of their id, touched forward only
// while live, revoked once (one by one or all of a user's); a user token is used at most once, only for its
// purpose and before it expires; a user's owned companies are listed; verification and password are set.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newId } from '../../src/lib/ids.js';
import type { SessionRow, UserRow } from '../../src/store/types.js';
import { forEachDialect } from '../support/stores.js';
import { T0 } from './contract-support.js';

forEachDialect((store) => {
  const newUser = (): Promise<UserRow> =>
    store.write((tx) =>
      tx.identity.insertUser({
        name: 'Ada',
        email: `${newId('a')}@example.test`,
        passwordHash: 'h',
        dateOfBirth: null,
        emailVerified: false,
        createdAtMs: T0,
      }),
    );
  const session = (userId: number, over: Partial<SessionRow> = {}): SessionRow => ({
    idHash: newId('a'),
    userId,
    csrfToken: newId('a'),
    createdAtMs: T0,
    lastSeenAtMs: T0,
    expiresAtMs: T0 + 1_000_000,
    revokedAtMs: null,
    ...over,
  });

  test('insertSession then findSession by hash returns it exactly; an unknown hash is undefined', async () => {
    const u = await newUser();
    const s = session(u.id);
    await store.write((tx) => tx.sessions.insertSession(s));
    assert.deepEqual(await store.read((tx) => tx.sessions.findSession(s.idHash)), s);
    assert.equal(await store.read((tx) => tx.sessions.findSession(`${s.idHash}x`)), undefined);
  });

  test('touchSession moves last_seen_at forward only, and never on a revoked session', async () => {
    const u = await newUser();
    const s = session(u.id);
    await store.write((tx) => tx.sessions.insertSession(s));
    assert.equal(await store.write((tx) => tx.sessions.touchSession(s.idHash, T0 + 60_000)), true);
    assert.equal(await store.write((tx) => tx.sessions.touchSession(s.idHash, T0 + 30_000)), false);
    assert.equal((await store.read((tx) => tx.sessions.findSession(s.idHash)))?.lastSeenAtMs, T0 + 60_000);
    assert.equal(await store.write((tx) => tx.sessions.revokeSession(s.idHash, T0 + 70_000)), true);
    assert.equal(await store.write((tx) => tx.sessions.revokeSession(s.idHash, T0 + 80_000)), false);
    assert.equal(await store.write((tx) => tx.sessions.touchSession(s.idHash, T0 + 120_000)), false);
    const after = await store.read((tx) => tx.sessions.findSession(s.idHash));
    assert.equal(after?.revokedAtMs, T0 + 70_000);
    assert.equal(after?.lastSeenAtMs, T0 + 60_000);
  });

  test("revokeUserSessions revokes every live session of that user and no one else's", async () => {
    const u = await newUser();
    const other = await newUser();
    const mine = [session(u.id), session(u.id), session(u.id, { revokedAtMs: T0 })];
    const theirs = session(other.id);
    await store.write(async (tx) => {
      for (const s of [...mine, theirs]) await tx.sessions.insertSession(s);
    });
    assert.equal(await store.write((tx) => tx.sessions.revokeUserSessions(u.id, T0 + 5)), 2);
    for (const s of mine)
      assert.notEqual((await store.read((tx) => tx.sessions.findSession(s.idHash)))?.revokedAtMs, null);
    assert.equal((await store.read((tx) => tx.sessions.findSession(mine[2]!.idHash)))?.revokedAtMs, T0);
    assert.equal((await store.read((tx) => tx.sessions.findSession(theirs.idHash)))?.revokedAtMs, null);
  });

  test('useUserToken: once, for its purpose, before it expires; concurrent uses get it once', async () => {
    const u = await newUser();
    const row = {
      tokenHash: newId('a'),
      userId: u.id,
      purpose: 'reset_password' as const,
      createdAtMs: T0,
      expiresAtMs: T0 + 1000,
      usedAtMs: null,
    };
    await store.write((tx) => tx.sessions.insertUserToken(row));
    assert.equal(await store.write((tx) => tx.sessions.useUserToken(row.tokenHash, 'verify_email', T0 + 1)), undefined);
    assert.equal(
      await store.write((tx) => tx.sessions.useUserToken(row.tokenHash, 'reset_password', T0 + 1000)),
      undefined,
    );
    const uses = await Promise.all(
      [1, 2, 3].map(() => store.write((tx) => tx.sessions.useUserToken(row.tokenHash, 'reset_password', T0 + 2))),
    );
    assert.deepEqual(
      uses.filter((x) => x !== undefined),
      [{ ...row, usedAtMs: T0 + 2 }],
    );
    assert.equal(await store.write((tx) => tx.sessions.useUserToken('unknown', 'reset_password', T0)), undefined);
  });

  test("listOwnedCompanies: the user's own companies, oldest first; setEmailVerified, setPasswordHash", async () => {
    const u = await newUser();
    const other = await newUser();
    const ids = [newId('c'), newId('c'), newId('c')];
    await store.write(async (tx) => {
      for (const [i, companyId] of ids.entries()) {
        const owner = i === 2 ? other.id : u.id;
        await tx.identity.insertCompany({
          companyId,
          name: `Co ${i}`,
          ownerUserId: owner,
          processor: 'sandbox',
          processorApiKey: null,
          createdAtMs: T0 + (10 - i),
        });
        await tx.identity.addCompanyMember(companyId, owner, 'owner');
      }
    });
    const mine = await store.read((tx) => tx.identity.listOwnedCompanies(u.id));
    assert.deepEqual(
      mine.map((c) => c.companyId),
      [ids[1], ids[0]],
    );
    await store.write((tx) => tx.identity.setEmailVerified(u.id));
    await store.write((tx) => tx.identity.setPasswordHash(u.id, 'h2'));
    const back = await store.read((tx) => tx.identity.findUserById(u.id));
    assert.equal(back?.emailVerified, true);
    assert.equal(back?.passwordHash, 'h2');
    assert.equal((await store.read((tx) => tx.identity.findUserById(other.id)))?.emailVerified, false);
  });
});
