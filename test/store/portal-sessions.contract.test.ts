// Guarantee: on SQLite and PostgreSQL, a portal session reads back exactly as written, by its token's hash and by
// its company and id (another company's: undefined); revoking marks it once (a second revoke keeps the first
// instant) and never another company's.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { newId } from '../../src/lib/ids.js';
import type { PortalSessionRow } from '../../src/store/types.js';
import { forEachDialect, seedCompanyAndAccount } from '../support/stores.js';
import { T0 } from './contract-support.js';

forEachDialect((store) => {
  describe('portal sessions', () => {
    test('round trip by token hash and by company; revoked once, by its company only', async () => {
      const a = await seedCompanyAndAccount(store);
      const b = await seedCompanyAndAccount(store);
      const row: PortalSessionRow = {
        sessionId: newId('ps'),
        tokenHash: 'f'.repeat(64),
        companyId: a.companyId,
        accountId: a.accountId,
        scopes: ['read', 'topup'],
        returnUrl: 'https://acme.test/back?x=1',
        frameAncestors: ['https://app.acme.test', 'http://localhost:3000'],
        expiresAtMs: T0 + 3_600_000,
        revokedAtMs: null,
        createdAtMs: T0,
      };
      const plain: PortalSessionRow = {
        ...row,
        sessionId: newId('ps'),
        tokenHash: 'e'.repeat(64),
        scopes: ['read'],
        returnUrl: null,
        frameAncestors: [],
      };
      await store.write(async (tx) => {
        await tx.portalSessions.insertPortalSession(row);
        await tx.portalSessions.insertPortalSession(plain);
      });
      const read = (f: (tx: Parameters<Parameters<typeof store.read>[0]>[0]) => Promise<unknown>) => store.read(f);
      assert.deepEqual(await read((tx) => tx.portalSessions.findPortalSessionByToken(row.tokenHash)), row);
      assert.deepEqual(await read((tx) => tx.portalSessions.findPortalSessionByToken(plain.tokenHash)), plain);
      assert.equal(await read((tx) => tx.portalSessions.findPortalSessionByToken('0'.repeat(64))), undefined);
      assert.deepEqual(await read((tx) => tx.portalSessions.findPortalSession(a.companyId, row.sessionId)), row);
      assert.equal(await read((tx) => tx.portalSessions.findPortalSession(b.companyId, row.sessionId)), undefined);

      const revoke = (companyId: string, atMs: number) =>
        store.write((tx) => tx.portalSessions.revokePortalSession(companyId, row.sessionId, atMs));
      assert.equal(await revoke(b.companyId, T0 + 5), false, "another company's session");
      assert.equal(await revoke(a.companyId, T0 + 10), true);
      assert.equal(await revoke(a.companyId, T0 + 20), true, 'revoking again answers it');
      assert.deepEqual(await read((tx) => tx.portalSessions.findPortalSession(a.companyId, row.sessionId)), {
        ...row,
        revokedAtMs: T0 + 10,
      });
      assert.equal(
        ((await read((tx) => tx.portalSessions.findPortalSession(a.companyId, plain.sessionId))) as PortalSessionRow)
          .revokedAtMs,
        null,
        'the other session untouched',
      );
    });

    test('ended sessions are deleted after their end, in bounded batches; live ones never', async () => {
      const a = await seedCompanyAndAccount(store);
      const session = (over: Partial<PortalSessionRow>): PortalSessionRow => ({
        sessionId: newId('ps'),
        tokenHash: newId('ps').padEnd(64, '0'),
        companyId: a.companyId,
        accountId: a.accountId,
        scopes: ['read'],
        returnUrl: null,
        frameAncestors: [],
        expiresAtMs: T0 + 3_600_000,
        revokedAtMs: null,
        createdAtMs: T0,
        ...over,
      });
      // Long before the other tests' sessions end (the store is shared).
      const base = T0 - 100 * 86_400_000;
      const expired = session({ expiresAtMs: base + 10 });
      const revoked = session({ revokedAtMs: base + 20 });
      const live = session({});
      await store.write(async (tx) => {
        for (const s of [expired, revoked, live]) await tx.portalSessions.insertPortalSession(s);
      });
      const exists = (s: PortalSessionRow) =>
        store.read(async (tx) => (await tx.portalSessions.findPortalSessionById(s.sessionId)) !== undefined);
      const sweep = (beforeMs: number, limit = 10) =>
        store.write((tx) => tx.portalSessions.deleteEndedPortalSessions(beforeMs, limit));
      assert.equal(await sweep(base + 10), 0, 'ended at the cut-off instant: kept');
      assert.equal(await sweep(base + 21, 1), 1, 'one at a time when asked');
      assert.equal(await sweep(base + 21), 1);
      assert.deepEqual([await exists(expired), await exists(revoked), await exists(live)], [false, false, true]);
    });
  });
});
