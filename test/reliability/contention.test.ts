// Guarantee: 64 clients on one balance, mixing events, holds (pending events), settles, adjustments and test-clock
// advances that expire holds, every request sent 2 to 5 times (some copies at once) with its Idempotency-Key: each
// request takes effect once, every copy gets the same answer, racing settles of one hold leave one winner, and the
// balance is exactly what the answered requests say.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CLI_DIALECTS, freshDatabase } from '../cli/support.js';
import { report, rng, seed, size } from './support/config.js';
import { type Answer, sleep } from './support/http.js';
import { judge } from './support/judge.js';
import { closeTargets, isKeyInUse, sendRetried, targets } from './support/load.js';
import { startChildServer } from './support/server.js';
import { account, balanceOf, signUp } from './support/setup.js';

const CLIENTS = 64;
const OPS_PER_CLIENT = size(5, 40);
const INITIAL = 1_000_000_000;
const HOLD_EXPIRY_S = 3600;

type Kind = 'event' | 'hold' | 'settle' | 'race' | 'adjust' | 'advance';

interface Op {
  key: string;
  kind: Kind;
  method: string;
  path: string;
  body: unknown;
  copies: number;
  concurrent: boolean;
  answers: Answer[];
  /** For settles: the hold and the state asked. */
  hold?: string;
  amount?: number;
}

for (const dialect of CLI_DIALECTS) {
  describe(`contention and duplicates: ${CLIENTS} clients on one balance (${dialect})`, () => {
    test('every request takes effect once, every copy gets the same answer, racing settles have one winner, ' +
      'and the balance is what the answers say', { timeout: 600_000 }, async (t) => {
      const s = seed(dialect === 'sqlite' ? 16_101 : 16_102);
      t.diagnostic(`seed ${s}`);
      const random = rng(s);
      const db = await freshDatabase(dialect);
      const server = await startChildServer(db.url);
      const tg = targets([server], CLIENTS * 2);
      try {
        const co = await signUp(server.url);
        const acc = await account(server.url, co, 'tokens', INITIAL);
        const holds: string[] = [];
        const ops: Op[] = [];
        let n = 0;
        const make = (client: number): Op => {
          const key = `c${client}-${n++}`;
          const copies = 2 + random.int(4);
          const concurrent = random.int(2) === 0;
          const base = { key, copies, concurrent, answers: [] as Answer[] };
          const roll = random.int(100);
          if (client === 0 && roll < 30)
            return {
              ...base,
              kind: 'advance',
              method: 'POST',
              path: '/v1/test_clock/advance',
              body: { seconds: 1201 },
            };
          if (roll < 30) {
            const amount = 1 + random.int(9);
            return {
              ...base,
              kind: 'event',
              method: 'POST',
              path: `/v1/accounts/${acc}/events`,
              body: [{ id: `ev-${key}`, type: 'use', cost_override: { amount, denomination: 'tokens' } }],
              amount,
            };
          }
          if (roll < 55 || holds.length === 0) {
            const amount = 10 + random.int(41);
            return {
              ...base,
              kind: 'hold',
              method: 'POST',
              path: `/v1/accounts/${acc}/events`,
              body: [
                { id: `hold-${key}`, type: 'use', state: 'pending', cost_override: { amount, denomination: 'tokens' } },
              ],
              amount,
            };
          }
          if (roll < 75) {
            const hold = random.pick(holds);
            const amount = random.int(60);
            const complete = random.int(3) !== 0;
            return {
              ...base,
              kind: 'settle',
              method: 'PUT',
              path: `/v1/events/${hold}`,
              body: complete
                ? { state: 'complete', cost_override: { amount, denomination: 'tokens' } }
                : { state: 'cancelled' },
              hold,
              amount,
            };
          }
          if (roll < 85) {
            const hold = random.pick(holds);
            return {
              ...base,
              kind: 'race',
              method: 'PUT',
              path: `/v1/events/${hold}`,
              body: { state: 'cancelled' },
              hold,
            };
          }
          const amount = random.int(2) === 0 ? 100 + random.int(100) : -(1 + random.int(20));
          return {
            ...base,
            kind: 'adjust',
            method: 'POST',
            path: `/v1/accounts/${acc}/balance/tokens/adjustments`,
            body: { amount },
            amount,
          };
        };
        const sendOnce = async (op: Op): Promise<void> => {
          const r = await sendRetried(
            tg,
            {
              method: op.method,
              path: op.path,
              auth: co.auth,
              body: op.body,
              headers: { 'idempotency-key': op.key },
            },
            { inUseBudgetMs: 0 },
          );
          if (r.answer) op.answers.push(r.answer);
        };
        const started = Date.now();
        await Promise.all(
          Array.from({ length: CLIENTS }, async (_, client) => {
            for (let i = 0; i < OPS_PER_CLIENT; i++) {
              const op = make(client);
              ops.push(op);
              if (op.concurrent) await Promise.all(Array.from({ length: op.copies }, () => sendOnce(op)));
              else for (let c = 0; c < op.copies; c++) await sendOnce(op);
              // Settles name only holds whose creation has been answered.
              if (op.kind === 'hold') holds.push((op.body as { id: string }[])[0]!.id);
              // A race: a settle to complete on the same hold at the same time as this cancel, its own key.
              if (op.kind === 'race') {
                const other = { ...op, key: `${op.key}-r`, kind: 'settle' as const, answers: [] };
                other.body = { state: 'complete', cost_override: { amount: 5, denomination: 'tokens' } };
                other.amount = 5;
                ops.push(other);
                await Promise.all([sendOnce(op), sendOnce(other), sendOnce(other)]);
              }
              await sleep(random.int(5));
            }
          }),
        );
        const elapsedMs = Date.now() - started;
        // One last copy of each, alone: the answer every copy should have had (a copy sent while another was in
        // flight may have been told `409 idempotency_key_in_use`, retry shortly).
        await Promise.all(ops.map((op) => sendOnce(op)));

        const fiveXx = ops.flatMap((op) => op.answers).filter((a) => a.status >= 500);
        assert.deepEqual(
          fiveXx.map((a) => a.text),
          [],
          '5xx answers',
        );
        const mismatched: string[] = [];
        for (const op of ops) {
          const real = op.answers.filter((a) => !isKeyInUse(a));
          const final = real.at(-1);
          if (final === undefined) mismatched.push(`${op.key}: only 409 idempotency_key_in_use`);
          else
            for (const a of real)
              if (a.status !== final.status || a.text !== final.text)
                mismatched.push(`${op.key}: ${a.status} ${a.text} vs ${final.status} ${final.text}`);
        }
        assert.deepEqual(mismatched, [], 'every copy of a request gets the same answer');

        const finalOf = (op: Op) => op.answers.filter((a) => !isKeyInUse(a)).at(-1)!;
        const rows = await db.sql('SELECT event_id, state, cost_amount FROM events WHERE account_id = ?', [acc]);
        const events = new Map(rows.map((r) => [String(r.event_id), r]));
        let expected = INITIAL;
        let pending = 0;
        const wrong: string[] = [];
        for (const op of ops.filter((o) => o.kind === 'event' || o.kind === 'hold')) {
          const a = finalOf(op);
          const id = (op.body as { id: string }[])[0]!.id;
          if (a.status !== 200) wrong.push(`${op.key}: ${a.status} ${a.text}`);
          if (!events.has(id)) wrong.push(`${id}: acknowledged, not stored`);
          if (op.kind === 'event') expected -= op.amount!;
        }
        const adjustments = ops.filter((o) => o.kind === 'adjust');
        for (const op of adjustments) {
          const a = finalOf(op);
          if (a.status !== 200) wrong.push(`${op.key}: ${a.status} ${a.text}`);
          else expected += op.amount!;
        }
        const stored = await db.sql(
          "SELECT COUNT(*) AS n FROM transactions WHERE account_id = ? AND kind = 'adjustment'",
          [acc],
        );
        assert.equal(Number(stored[0]!.n), adjustments.length, 'one adjustment transaction per adjustment request');
        // Each hold: at most one settle won; the stored state is the winner's (or expiry's).
        const settles = ops.filter((o) => o.kind === 'settle' || o.kind === 'race');
        for (const hold of holds) {
          const row = events.get(hold)!;
          const mine = settles.filter((o) => o.hold === hold);
          const won = mine.filter((o) => finalOf(o).status === 200);
          const states = new Set(won.map((o) => (o.body as { state: string }).state));
          if (states.size > 1) wrong.push(`${hold}: both a complete and a cancel answered 200`);
          for (const o of mine) {
            const a = finalOf(o);
            if (a.status !== 200 && !(a.status === 409 && a.json?.error?.type === 'conflict'))
              wrong.push(`${o.key}: ${a.status} ${a.text}`);
          }
          const completes = won.filter((o) => (o.body as { state: string }).state === 'complete');
          if (row.state === 'complete') {
            const costs = new Set(completes.map((o) => o.amount));
            if (!costs.has(Number(row.cost_amount)))
              wrong.push(`${hold}: complete at ${row.cost_amount}, no settle answered 200 with that cost`);
            expected -= Number(row.cost_amount);
          } else if (completes.length > 0) wrong.push(`${hold}: a complete answered 200, stored ${row.state}`);
          if (row.state === 'pending') pending += Number(row.cost_amount);
        }
        assert.deepEqual(wrong, [], 'answers and stored state agree');
        const b = await balanceOf(server.url, co, acc);
        assert.deepEqual({ amount: b.amount, pending: b.pending }, { amount: expected, pending });
        assert.deepEqual(await judge(db), [], 'ledger audit');
        const copies = ops.reduce((x, o) => x + o.answers.length, 0);
        const inUse = ops.reduce((x, o) => x + o.answers.filter(isKeyInUse).length, 0);
        report(t, `contention-${dialect}`, {
          seed: s,
          clients: CLIENTS,
          requests: ops.length,
          copies_sent: copies,
          in_use_409: inUse,
          holds: holds.length,
          settles: settles.length,
          cancelled_or_expired: rows.filter((r) => r.state === 'cancelled').length,
          elapsed_ms: elapsedMs,
          lost: 0,
          duplicated: 0,
          five_xx: fiveXx.length,
          hold_expiry_s: HOLD_EXPIRY_S,
        });
      } finally {
        closeTargets(tg);
        await server.kill9();
        await db.drop();
      }
    });
  });
}
