/** `npm start`: serve the API, its docs and the workers until SIGINT/SIGTERM. */
import { loadConfig } from './config.js';
import { startServer } from './server.js';

const config = loadConfig();
const server = await startServer(config);
console.log(
  `billing engine listening on ${server.url} (${server.store.dialect}${config.testClock ? ', test clock' : ''})`,
);

let closing = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (closing) return;
    closing = true;
    server.close().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  });
}
