/**
 * A fresh PostgreSQL database per bench run, created and dropped through the admin URL, and
 * what the benches ask the database server itself (its size, its data directory, a VACUUM):
 * questions about PostgreSQL, not about the engine's tables.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

const CONNECT_TIMEOUT_MS = 2_000;

async function withAdmin<T>(adminUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export async function postgresReachable(adminUrl: string): Promise<boolean> {
  try {
    await withAdmin(adminUrl, async (client) => {
      await client.query('SELECT 1');
    });
    return true;
  } catch {
    return false;
  }
}

export interface BenchDatabase {
  name: string;
  /** DATABASE_URL for the server. */
  url: string;
  /** pg_database_size, in bytes. */
  bytes(): Promise<number>;
  /**
   * `VACUUM (ANALYZE)` of the whole database: what autovacuum (which may be off on a bench server)
   * would have done over the months a seeded history stands for.
   */
  vacuumAnalyze(): Promise<void>;
  drop(): Promise<void>;
}

export async function createBenchDatabase(adminUrl: string): Promise<BenchDatabase> {
  const name = `bench_${randomBytes(6).toString('hex')}`;
  // The name is ours (hex), so quoting it as an identifier is enough.
  await withAdmin(adminUrl, async (client) => {
    await client.query(`CREATE DATABASE "${name}"`);
  });
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  let dropped = false;
  return {
    name,
    url: url.toString(),
    bytes: () =>
      withAdmin(adminUrl, async (client) => {
        const { rows } = await client.query<{ bytes: string }>('SELECT pg_database_size($1) AS bytes', [name]);
        return Number(rows[0]?.bytes ?? 0);
      }),
    vacuumAnalyze: () =>
      withAdmin(url.toString(), async (client) => {
        await client.query('VACUUM (ANALYZE)');
      }),
    drop: async () => {
      if (dropped) return;
      dropped = true;
      await withAdmin(adminUrl, async (client) => {
        await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      });
    },
  };
}

/** The database server's data directory (where a seed's rows go), or undefined if it will not say. */
export async function dataDirectory(adminUrl: string): Promise<string | undefined> {
  try {
    return await withAdmin(adminUrl, async (client) => {
      const { rows } = await client.query<{ data_directory: string }>('SHOW data_directory');
      return rows[0]?.data_directory;
    });
  } catch {
    return undefined;
  }
}
