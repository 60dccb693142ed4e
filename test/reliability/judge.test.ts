// The judge itself: clean on a ledger the server wrote, and it names each corruption the store's own audit does
// not see (a usage transaction of the wrong amount, a usage transaction missing, one naming no event).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CLI_DIALECTS, type TestDatabase, freshDatabase } from '../cli/support.js';
import { send } from './support/http.js';
import { judge } from './support/judge.js';
import { type ChildServer, startChildServer } from './support/server.js';
import { type Company, account, signUp } from './support/setup.js';

for (const dialect of CLI_DIALECTS) {
  describe(`the judge (${dialect})`, () => {
    let db: TestDatabase;
    let server: ChildServer;
    let co: Company;
    before(async () => {
      db = await freshDatabase(dialect);
      server = await startChildServer(db.url);
      co = await signUp(server.url, 'Judged');
      const acc = await account(server.url, co, 'tokens', 1_000);
      const events = ['e1', 'e2', 'e3'].map((id) => ({
        id,
        type: 'x',
        cost_override: { amount: 5, denomination: 'tokens' },
      }));
      const r = await send(server.url, {
        method: 'POST',
        path: `/v1/accounts/${acc}/events`,
        auth: co.auth,
        body: events,
      });
      assert.equal(r.status, 200, r.text);
      await server.kill9();
    });
    after(async () => {
      await db.drop();
    });

    test('a ledger the server wrote is clean; each corruption is named', async () => {
      assert.deepEqual(await judge(db), []);
      await db.sql("UPDATE transactions SET amount = amount - 1 WHERE event_id = 'e1'");
      await db.sql("DELETE FROM transactions WHERE event_id = 'e2'");
      await db.sql("UPDATE transactions SET event_id = 'ghost' WHERE event_id = 'e3'");
      const problems = await judge(db);
      for (const [id, what] of [
        ['e1', /1 usage transaction\(s\) totalling -6/],
        ['e2', /0 usage transaction\(s\)/],
        ['e3', /0 usage transaction\(s\)/],
      ] as const) {
        assert.ok(
          problems.some((p) => p.startsWith(`event ${id} `) && what.test(p)),
          `${id}: ${problems.join('\n')}`,
        );
      }
      assert.ok(
        problems.some((p) => /name no event \(ghost\)/.test(p)),
        problems.join('\n'),
      );
    });
  });
}
