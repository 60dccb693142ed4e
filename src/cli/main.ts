#!/usr/bin/env node
/**
 * `billing`: the operator's command line (package.json "bin", built to dist/cli/main.js). Wires
 * the process (arguments, environment, standard streams) to `run`, which does the work.
 */
import { run } from './run.js';

async function readStdin(): Promise<string | undefined> {
  if (process.stdin.isTTY) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

process.exitCode = await run(process.argv.slice(2), {
  env: process.env,
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  readStdin,
});
