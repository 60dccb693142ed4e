// Starts the writer thread from the TypeScript sources (tests, `npm run dev` under tsx). Node 20
// does not pass `--import tsx` on to worker threads, so the thread registers tsx itself and
// then imports its real entry. A built (JavaScript) server starts thread.js directly.
import { register } from 'tsx/esm/api';
import { workerData } from 'node:worker_threads';

register();
await import(workerData.entry);
