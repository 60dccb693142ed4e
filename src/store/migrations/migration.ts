/**
 * What a migration is, and the placeholders that let one SQL text serve both databases (`both`).
 * Money and units are BIGINT (exact integers); timestamps are BIGINT epoch milliseconds taken
 * from the injected clock, so the test clock governs stored times too.
 */
export interface Migration {
  id: number;
  name: string;
  sqlite: string;
  postgres: string;
}

/** The SQL text of `sql` for `dialect`: its placeholders ({{SEQ}}, {{BOOL}}, …) replaced. */
export function both(sql: string, dialect: 'sqlite' | 'postgres'): string {
  if (dialect === 'sqlite') {
    return sql
      .replaceAll('{{SEQ}}', 'INTEGER PRIMARY KEY')
      .replaceAll('{{BOOL}}', 'INTEGER')
      .replaceAll('{{DOUBLE}}', 'REAL')
      .replaceAll('{{DECIMAL}}', 'TEXT')
      .replaceAll('{{SEQ_IN_INDEX}}', '');
  }
  return sql
    .replaceAll('{{SEQ}}', 'BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY')
    .replaceAll('{{BOOL}}', 'BOOLEAN')
    .replaceAll('{{DOUBLE}}', 'DOUBLE PRECISION')
    .replaceAll('{{DECIMAL}}', 'NUMERIC')
    .replaceAll('{{SEQ_IN_INDEX}}', ', seq');
}
