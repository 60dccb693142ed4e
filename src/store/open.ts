/** Picks the store from DATABASE_URL. Only main.ts, cli/ and tests know the concrete stores. */
import { PostgresStore } from './postgres.js';
import { SqliteStore } from './sqlite.js';
import type { Store } from './types.js';

export async function openStore(
  databaseUrl: string,
  opts: { pgPoolSize?: number; pgSchema?: string; pgPreparedStatements?: boolean } = {},
): Promise<Store> {
  if (databaseUrl.startsWith('sqlite:')) {
    const file = databaseUrl.slice('sqlite:'.length);
    return new SqliteStore(file === ':memory:' ? ':memory:' : file);
  }
  return PostgresStore.open({
    connectionString: databaseUrl,
    ...(opts.pgPoolSize !== undefined ? { poolSize: opts.pgPoolSize } : {}),
    ...(opts.pgSchema !== undefined ? { schema: opts.pgSchema } : {}),
    ...(opts.pgPreparedStatements !== undefined ? { preparedStatements: opts.pgPreparedStatements } : {}),
  });
}
