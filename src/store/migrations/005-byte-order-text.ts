/**
 * 5. PostgreSQL compares text in the database's collation unless told otherwise: a libc
 * collation (even C.UTF-8 before PostgreSQL 17) calls strcoll for every comparison in every
 * index insert and lookup. Every text column here is an identifier, a code or free text that is
 * never sorted for people, so all compare as bytes, the order SQLite uses (and the same order
 * as C.UTF-8 gives: UTF-8 bytes sort as code points).
 */
import type { Migration } from './migration.js';

export const BYTE_ORDER_TEXT = `
DO $$
DECLARE c record;
BEGIN
  FOR c IN SELECT table_name, column_name FROM information_schema.columns
           WHERE table_schema = current_schema() AND data_type = 'text' AND collation_name IS DISTINCT FROM 'C'
           ORDER BY table_name, ordinal_position LOOP
    EXECUTE format('ALTER TABLE %I ALTER COLUMN %I TYPE text COLLATE "C"', c.table_name, c.column_name);
  END LOOP;
END $$;`;

export const byteOrderText: Migration = {
  id: 5,
  name: 'byte_order_text',
  sqlite: 'SELECT 1;',
  postgres: BYTE_ORDER_TEXT,
};
