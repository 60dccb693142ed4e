/** Usage on SQLite: retention deletes company by company, the rollups having no index on `hour` alone. */
import { UsageSql } from '../usage/sql.js';
import { SQLITE } from './dialect.js';
import type { SqliteExec } from './exec.js';

export class SqliteUsage extends UsageSql {
  constructor(db: SqliteExec) {
    super(db, SQLITE);
  }
  /**
   * The rollups are WITHOUT ROWID tables without an index on `hour` alone (migration 11): old
   * hours are found company by company (a seek in `usage_hours_company`, or in the company
   * rollup's primary key, per company) and deleted by key. CROSS JOIN keeps companies the outer
   * loop (without statistics SQLite would rather scan the rollup).
   */
  override async deleteUsageBefore(hourMs: number, limit: number) {
    let deleted = 0;
    for (const [table, key] of [
      ['usage_hours', 'account_id, hour, denomination, type'],
      ['usage_company_hours', 'company_id, hour, denomination, type, shard'],
    ] as const) {
      if (deleted >= limit) break;
      const old = key
        .split(', ')
        .map((c) => `u.${c}`)
        .join(', ');
      deleted += await this.db.run(
        `DELETE FROM ${table} WHERE (${key}) IN (SELECT ${old} FROM companies c ` +
          `CROSS JOIN ${table} u ON u.company_id = c.company_id AND u.hour < ? LIMIT ?)`,
        [hourMs, limit - deleted],
      );
    }
    return deleted;
  }
}
