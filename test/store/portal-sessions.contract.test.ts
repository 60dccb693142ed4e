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
  });
});
