/** The outbox (jobs): row mappers and the SQL both databases share (mixed into SqlTx, sql-base.ts). */
import { SqlCore, num, numOrNull, type SqlRow } from '../sql-core.js';
import type { ClaimedOutboxRow, OutboxRow, OutboxTx } from './types.js';

const toClaimedOutbox = (r: SqlRow): ClaimedOutboxRow => ({
  outboxId: String(r.outbox_id),
  companyId: String(r.company_id),
  topic: String(r.topic),
  payload: JSON.parse(String(r.payload)) as Record<string, unknown>,
  runAtMs: num(r.run_at),
  createdAtMs: num(r.created_at),
  attempts: num(r.attempts),
  claimedUntilMs: num(r.claimed_until),
});

export class OutboxSql extends SqlCore implements OutboxTx {
  async listOutboxOfCompany(companyId: string, topicPrefix: string) {
    const rows = await this.db.all(
      "SELECT * FROM outbox WHERE company_id = ? AND topic LIKE ? ESCAPE '\\' ORDER BY seq",
      [companyId, `${topicPrefix.replace(/[%_\\]/g, (c) => `\\${c}`)}%`],
    );
    return rows.map((r) => ({
      outboxId: String(r.outbox_id),
      companyId: String(r.company_id),
      topic: String(r.topic),
      payload: JSON.parse(String(r.payload)) as Record<string, unknown>,
      runAtMs: num(r.run_at),
      createdAtMs: num(r.created_at),
    }));
  }

  async outboxBacklog(nowMs: number) {
    // Both figures come from the partial index outbox_due (run_at WHERE done_at IS NULL).
    const [count] = await this.db.all('SELECT count(*) AS n FROM outbox WHERE done_at IS NULL', []);
    const [due] = await this.db.all('SELECT min(run_at) AS oldest FROM outbox WHERE done_at IS NULL AND run_at <= ?', [
      nowMs,
    ]);
    return { pending: num(count?.n ?? 0), oldestDueAtMs: numOrNull(due?.oldest) };
  }

  async insertOutbox(rows: OutboxRow[]) {
    for (const o of rows) {
      await this.db.run(
        'INSERT INTO outbox (outbox_id, company_id, topic, payload, run_at, created_at) VALUES (?, ?, ?, ?, ?, ?)',
        [o.outboxId, o.companyId, o.topic, JSON.stringify(o.payload), o.runAtMs, o.createdAtMs],
      );
    }
  }
  async claimOutbox(topicPrefix: string, nowMs: number, leaseMs: number, limit: number): Promise<ClaimedOutboxRow[]> {
    const rows = await this.db.all(
      `UPDATE outbox SET claimed_until = ?, attempts = attempts + 1
     WHERE seq IN (SELECT seq FROM outbox WHERE done_at IS NULL AND run_at <= ? ` +
        `AND (claimed_until IS NULL OR claimed_until <= ?)
                   AND topic LIKE ? ESCAPE '\\' ORDER BY run_at, seq LIMIT ?${this.skipLocked()})
     RETURNING *`,
      [nowMs + leaseMs, nowMs, nowMs, `${topicPrefix.replace(/[%_\\]/g, (c) => `\\${c}`)}%`, limit],
    );
    return rows.map(toClaimedOutbox).sort((a, b) => a.runAtMs - b.runAtMs);
  }
  async completeOutbox(outboxId: string, nowMs: number) {
    await this.db.run('UPDATE outbox SET done_at = ?, claimed_until = NULL WHERE outbox_id = ?', [nowMs, outboxId]);
  }
  async retryOutbox(outboxId: string, runAtMs: number, error: string | null) {
    await this.db.run('UPDATE outbox SET run_at = ?, claimed_until = NULL, last_error = ? WHERE outbox_id = ?', [
      runAtMs,
      error,
      outboxId,
    ]);
  }
  async deleteFinishedOutbox(doneBeforeMs: number, limit: number) {
    return this.db.run(
      'DELETE FROM outbox WHERE seq IN (SELECT seq FROM outbox WHERE done_at IS NOT NULL AND done_at < ? ' +
        `ORDER BY done_at LIMIT ?${this.skipLocked()})`,
      [doneBeforeMs, limit],
    );
  }
}
