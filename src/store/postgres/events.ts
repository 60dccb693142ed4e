/** Events on PostgreSQL: a group of settles locks its events `FOR UPDATE`, in one order, with one statement. */
import { distinctEventKeys, EventsSql, toEvent } from '../events/sql.js';
import type { EventKey, EventRow } from '../events/types.js';
import { POSTGRES } from './dialect.js';
import type { PgExec } from './exec.js';

export class PgEvents extends EventsSql {
  constructor(db: PgExec) {
    super(db, POSTGRES);
  }
  async lockEvents(input: EventKey[]): Promise<EventRow[]> {
    if (input.length === 0) return [];
    const keys = distinctEventKeys(input);
    return (
      await this.db.all(
        `SELECT e.* FROM events e JOIN unnest(?::text[], ?::text[]) AS k(company_id, event_id)
         ON e.company_id = k.company_id AND e.event_id = k.event_id
       ORDER BY e.company_id, e.event_id FOR UPDATE OF e`,
        [keys.map((k) => k.companyId), keys.map((k) => k.eventId)],
      )
    ).map(toEvent);
  }
}
