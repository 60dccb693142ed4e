/** Events on SQLite: the IMMEDIATE transaction already holds the write lock, so locking an event is reading it. */
import { distinctEventKeys, EventsSql, toEvent } from '../events/sql.js';
import type { EventKey, EventRow } from '../events/types.js';
import { SQLITE } from './dialect.js';
import type { SqliteExec } from './exec.js';

export class SqliteEvents extends EventsSql {
  declare protected readonly db: SqliteExec;
  constructor(db: SqliteExec) {
    super(db, SQLITE);
  }
  async lockEvents(keys: EventKey[]): Promise<EventRow[]> {
    // A primary-key probe each.
    const out: EventRow[] = [];
    for (const k of distinctEventKeys(keys)) {
      const r = this.db.allSync('SELECT * FROM events WHERE company_id = ? AND event_id = ?', [
        k.companyId,
        k.eventId,
      ])[0];
      if (r) out.push(toEvent(r));
    }
    return out;
  }
}
