// Guarantees: on SQLite and PostgreSQL, users, companies, memberships and API keys are stored and found
// exactly, scoped to their company, unique where they must be, and a key is revoked once.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { newId } from '../../src/lib/ids.js';
import { forEachDialect, seedCompanyAndAccount } from '../support/stores.js';
import { T0 } from './contract-support.js';

forEachDialect((store) => {
  describe('users, companies, members', () => {
    test('insertUser returns the row with its id; find by email and by id', async () => {
      const email = `${newId('a')}@example.test`;
      const inserted = await store.write((tx) =>
        tx.identity.insertUser({
          name: 'Ada Lovelace',
          email,
          passwordHash: 'h1',
          dateOfBirth: null,
          emailVerified: false,
          createdAtMs: T0,
        }),
      );
      assert.equal(typeof inserted.id, 'number');
      assert.deepEqual(inserted, {
        id: inserted.id,
        name: 'Ada Lovelace',
        email,
        passwordHash: 'h1',
        dateOfBirth: null,
        emailVerified: false,
        createdAtMs: T0,
      });
      assert.deepEqual(await store.read((tx) => tx.identity.findUserByEmail(email)), inserted);
      assert.deepEqual(await store.read((tx) => tx.identity.findUserById(inserted.id)), inserted);
      assert.equal(await store.read((tx) => tx.identity.findUserByEmail(`nobody-${email}`)), undefined);
      assert.equal(await store.read((tx) => tx.identity.findUserById(inserted.id + 1_000_000)), undefined);
    });

    test('updateUser changes name and email', async () => {
      const email = `${newId('a')}@example.test`;
      const u = await store.write((tx) =>
        tx.identity.insertUser({
          name: 'A',
          email,
          passwordHash: 'h',
          dateOfBirth: '1990-01-01',
          emailVerified: true,
          createdAtMs: T0,
        }),
      );
      const email2 = `new-${email}`;
      await store.write((tx) => tx.identity.updateUser(u.id, { name: 'B', email: email2 }));
      const found = await store.read((tx) => tx.identity.findUserById(u.id));
      assert.deepEqual(found, { ...u, name: 'B', email: email2 });
      assert.equal(found!.emailVerified, true);
      assert.equal(found!.dateOfBirth, '1990-01-01');
      assert.equal(await store.read((tx) => tx.identity.findUserByEmail(email)), undefined);
    });

    test('a duplicate email makes the write reject, and nothing of that transaction is kept', async () => {
      const email = `${newId('a')}@example.test`;
      const other = `${newId('a')}@example.test`;
      await store.write((tx) =>
        tx.identity.insertUser({
          name: 'First',
          email,
          passwordHash: 'h',
          dateOfBirth: null,
          emailVerified: false,
          createdAtMs: T0,
        }),
      );
      await assert.rejects(
        store.write(async (tx) => {
          await tx.identity.insertUser({
            name: 'Other',
            email: other,
            passwordHash: 'h',
            dateOfBirth: null,
            emailVerified: false,
            createdAtMs: T0,
          });
          await tx.identity.insertUser({
            name: 'Dup',
            email,
            passwordHash: 'h',
            dateOfBirth: null,
            emailVerified: false,
            createdAtMs: T0,
          });
        }),
      );
      assert.equal(await store.read((tx) => tx.identity.findUserByEmail(other)), undefined);
      assert.equal((await store.read((tx) => tx.identity.findUserByEmail(email)))!.name, 'First');
    });

    test('companies and membership', async () => {
      const s = await seedCompanyAndAccount(store);
      const c = await store.read((tx) => tx.identity.findCompany(s.companyId));
      assert.deepEqual(c, {
        companyId: s.companyId,
        name: c!.name,
        ownerUserId: s.userId,
        processor: 'sandbox',
        processorApiKey: null,
        createdAtMs: T0,
      });
      assert.equal(await store.read((tx) => tx.identity.isCompanyMember(s.companyId, s.userId)), true);

      const stranger = await store.write((tx) =>
        tx.identity.insertUser({
          name: 'S',
          email: `${newId('a')}@example.test`,
          passwordHash: 'h',
          dateOfBirth: null,
          emailVerified: false,
          createdAtMs: T0,
        }),
      );
      assert.equal(await store.read((tx) => tx.identity.isCompanyMember(s.companyId, stranger.id)), false);
      await store.write((tx) => tx.identity.addCompanyMember(s.companyId, stranger.id, 'member'));
      assert.equal(await store.read((tx) => tx.identity.isCompanyMember(s.companyId, stranger.id)), true);
      await assert.rejects(
        store.write((tx) => tx.identity.addCompanyMember(s.companyId, stranger.id, 'member')),
        'a membership exists once',
      );

      const stripeId = newId('c');
      await store.write((tx) =>
        tx.identity.insertCompany({
          companyId: stripeId,
          name: 'S Co',
          ownerUserId: stranger.id,
          processor: 'stripe',
          processorApiKey: 'rk_test_1',
          createdAtMs: T0 + 1,
        }),
      );
      assert.deepEqual(await store.read((tx) => tx.identity.findCompany(stripeId)), {
        companyId: stripeId,
        name: 'S Co',
        ownerUserId: stranger.id,
        processor: 'stripe',
        processorApiKey: 'rk_test_1',
        createdAtMs: T0 + 1,
      });
      assert.equal(await store.read((tx) => tx.identity.findCompany(newId('c'))), undefined);
      assert.equal(await store.read((tx) => tx.identity.isCompanyMember(stripeId, s.userId)), false);
    });
  });

  describe('api keys', () => {
    test('find by digest, list per company, revoke once', async () => {
      const a = await seedCompanyAndAccount(store);
      const b = await seedCompanyAndAccount(store);
      const k1 = {
        keyId: newId('key'),
        companyId: a.companyId,
        digest: newId('key'),
        prefix: 'sk_1',
        createdAtMs: T0,
        revokedAtMs: null,
        lastUsedAtMs: null,
      };
      const k2 = {
        keyId: newId('key'),
        companyId: a.companyId,
        digest: newId('key'),
        prefix: 'sk_2',
        createdAtMs: T0 + 1,
        revokedAtMs: null,
        lastUsedAtMs: null,
      };
      const kb = {
        keyId: newId('key'),
        companyId: b.companyId,
        digest: newId('key'),
        prefix: 'sk_b',
        createdAtMs: T0,
        revokedAtMs: null,
        lastUsedAtMs: null,
      };
      await store.write(async (tx) => {
        await tx.identity.insertApiKey(k2);
        await tx.identity.insertApiKey(k1);
        await tx.identity.insertApiKey(kb);
      });
      assert.deepEqual(await store.read((tx) => tx.identity.findApiKeyByDigest(k1.digest)), k1);
      assert.equal(await store.read((tx) => tx.identity.findApiKeyByDigest('0'.repeat(64))), undefined);
      assert.deepEqual(
        await store.read((tx) => tx.identity.listApiKeys(a.companyId)),
        [k1, k2],
        'oldest first, only this company',
      );

      assert.equal(
        await store.write((tx) => tx.identity.revokeApiKey(b.companyId, k1.keyId, T0 + 5)),
        false,
        'another company cannot revoke it',
      );
      assert.equal(await store.write((tx) => tx.identity.revokeApiKey(a.companyId, k1.keyId, T0 + 5)), true);
      assert.equal(
        await store.write((tx) => tx.identity.revokeApiKey(a.companyId, k1.keyId, T0 + 6)),
        false,
        'second revoke',
      );
      assert.equal(
        await store.write((tx) => tx.identity.revokeApiKey(a.companyId, newId('key'), T0 + 6)),
        false,
        'unknown key',
      );
      assert.equal(
        (await store.read((tx) => tx.identity.findApiKeyByDigest(k1.digest)))!.revokedAtMs,
        T0 + 5,
        'first revocation time kept',
      );
      assert.equal((await store.read((tx) => tx.identity.findApiKeyByDigest(k2.digest)))!.revokedAtMs, null);
    });

    test('markApiKeyUsed moves last_used_at forward only, on that key only', async () => {
      const a = await seedCompanyAndAccount(store);
      const key = (prefix: string, createdAtMs: number) => ({
        keyId: newId('key'),
        companyId: a.companyId,
        digest: newId('key'),
        prefix,
        createdAtMs,
        revokedAtMs: null,
        lastUsedAtMs: null,
      });
      const used = key('sk_u', T0);
      const unused = key('sk_n', T0 + 1);
      await store.write(async (tx) => {
        await tx.identity.insertApiKey(used);
        await tx.identity.insertApiKey(unused);
      });
      const lastUsed = async (k: { digest: string }) =>
        (await store.read((tx) => tx.identity.findApiKeyByDigest(k.digest)))!.lastUsedAtMs;
      assert.equal(await lastUsed(used), null, 'a new key was never used');

      assert.equal(await store.write((tx) => tx.identity.markApiKeyUsed(used.keyId, T0 + 60_000)), true);
      assert.equal(await lastUsed(used), T0 + 60_000);
      assert.equal(
        await store.write((tx) => tx.identity.markApiKeyUsed(used.keyId, T0 + 30_000)),
        false,
        'an earlier time (a slower process) does not move it back',
      );
      assert.equal(await store.write((tx) => tx.identity.markApiKeyUsed(used.keyId, T0 + 60_000)), false, 'same time');
      assert.equal(await lastUsed(used), T0 + 60_000);
      assert.equal(await store.write((tx) => tx.identity.markApiKeyUsed(used.keyId, T0 + 120_000)), true);
      assert.equal(await store.write((tx) => tx.identity.markApiKeyUsed(newId('key'), T0)), false, 'unknown key');

      assert.deepEqual(
        (await store.read((tx) => tx.identity.listApiKeys(a.companyId))).map((k) => [k.prefix, k.lastUsedAtMs]),
        [
          ['sk_u', T0 + 120_000],
          ['sk_n', null],
        ],
        'listed with the time; the other key untouched',
      );
    });

    test('a digest is unique', async () => {
      const a = await seedCompanyAndAccount(store);
      const digest = newId('key');
      await store.write((tx) =>
        tx.identity.insertApiKey({
          keyId: newId('key'),
          companyId: a.companyId,
          digest,
          prefix: 'p',
          createdAtMs: T0,
          revokedAtMs: null,
          lastUsedAtMs: null,
        }),
      );
      await assert.rejects(
        store.write((tx) =>
          tx.identity.insertApiKey({
            keyId: newId('key'),
            companyId: a.companyId,
            digest,
            prefix: 'p',
            createdAtMs: T0,
            revokedAtMs: null,
            lastUsedAtMs: null,
          }),
        ),
      );
      assert.equal((await store.read((tx) => tx.identity.listApiKeys(a.companyId))).length, 1);
    });
  });
});
