/**
 * Baseline: a Fastify hello-world, the ceiling for any Fastify route on this machine.
 * Run by the bench as its own process: `PORT=… HOST=… node --import tsx bench/baselines/hello.ts`.
 */
import Fastify from 'fastify';
import { listenFromEnv } from './listen.js';

const app = Fastify({ logger: false });

app.get('/', async () => ({ hello: 'world' }));
app.get('/healthz', async () => ({ ok: true }));

await listenFromEnv(app);
