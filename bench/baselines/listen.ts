/** Shared by the baseline servers: listen where the bench says, stop cleanly on SIGTERM. */
import type { FastifyInstance } from 'fastify';

const DEFAULT_HOST = '127.0.0.1';
const DEFAULT_PORT = 3000;

export async function listenFromEnv(app: FastifyInstance): Promise<void> {
  const port = process.env.PORT !== undefined && process.env.PORT !== '' ? Number(process.env.PORT) : DEFAULT_PORT;
  const host = process.env.HOST !== undefined && process.env.HOST !== '' ? process.env.HOST : DEFAULT_HOST;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      void app.close().then(() => process.exit(0));
    });
  }
  await app.listen({ port, host });
}
