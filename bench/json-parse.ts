/**
 * What the JSON body checks cost on the ingest path: the parse of a 1-event and a 100-event body
 * as the server's parser does it (Fastify's default one, prototype poisoning refused), alone
 * ("parse") and followed by the checks the server runs on every body (`bodyViolation`: depth,
 * NUL characters, keys given twice; "parse + checks"). The two are run alternately, `--rounds`
 * times (default 3), so that a noisy machine shows in the spread; every figure is printed.
 *
 *   npm run bench:json
 *   npm run bench:json -- --rounds 5
 */
import { parseArgs } from 'node:util';
import Fastify from 'fastify';
import { bodyViolation } from './lib/engine.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' } } });
const rounds = Number(values.rounds);

/** A request body shaped like the bench's own: client ids, a cost override, a little metadata. */
function body(events: number): string {
  return JSON.stringify({
    events: Array.from({ length: events }, (_, i) => ({
      type: 'api_call',
      id: `evt-${i}-7f3a9c21`,
      quantity: 3,
      cost_override: { amount: 2, denomination: 'tokens' },
      metadata: { region: 'eu-west-1', user: `u_${i}`, tags: ['a', 'b'] },
    })),
  });
}

// The server's parser: Fastify's default, prototype poisoning refused (src/http/app.ts).
const defaultJson = Fastify().getDefaultJsonParser('error', 'error');
function parse(text: string): unknown {
  let out: unknown;
  defaultJson(undefined as never, text, (err, parsed) => {
    if (err) throw err;
    out = parsed;
  });
  return out;
}
const variants: Record<string, (text: string) => unknown> = {
  parse,
  'parse + checks': (text) => {
    const parsed = parse(text);
    if (bodyViolation(text, parsed) !== undefined) throw new Error('the bench body was refused');
    return parsed;
  },
};

function microseconds(f: (text: string) => unknown, text: string, iterations: number): number {
  for (let i = 0; i < Math.min(iterations, 2_000); i++) f(text);
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) f(text);
  return Number(process.hrtime.bigint() - start) / iterations / 1_000;
}

console.log('events  bytes  round  variant          µs per body');
for (const events of [1, 100]) {
  const text = body(events);
  const iterations = events === 1 ? 200_000 : 5_000;
  for (let round = 1; round <= rounds; round++) {
    for (const [name, f] of Object.entries(variants)) {
      const us = microseconds(f, text, iterations);
      console.log(
        `${String(events).padStart(6)}  ${String(text.length).padStart(5)}  ${String(round).padStart(5)}  ` +
          `${name.padEnd(15)}  ${us.toFixed(2).padStart(10)}`,
      );
    }
  }
}
