/** SQLite's side of the SQL both databases share: its one writer already serialises, so no row-lock clauses. */
import { type Dialect, placeholders } from '../sql-core.js';

export const SQLITE: Dialect = {
  name: 'sqlite',
  bool: (b) => (b ? 1 : 0),
  inList: (column, values) => [`${column} IN (${placeholders(values.length)})`, [...values]],
  seqOrder: () => 'seq DESC',
  skipLocked: '',
  forUpdate: '',
  rowId: 'rowid',
  accountSearch:
    '(instr(lower(name), ?) > 0 OR instr(lower(email), ?) > 0 OR substr(account_id, 1, ?) = ? OR ' +
    "EXISTS (SELECT 1 FROM json_each(accounts.metadata) m WHERE m.type = 'text' AND m.value = ?))",
};
