// Guarantee: the client's checked-in API types (sdk/typescript/src/schema.ts, which the console uses too) are what
// scripts/openapi.ts generates from the server's routes today; after a route change `npm run openapi` must be run,
// or this fails.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { OPENAPI_TYPES, generate } from '../../scripts/openapi.js';

test('sdk/typescript/src/schema.ts is what the server document generates now (run `npm run openapi`)', async () => {
  const { doc, types } = await generate();
  assert.ok(doc.paths?.['/v1/accounts/{account_id}/transactions'], 'the document has the routes');
  assert.equal(readFileSync(OPENAPI_TYPES, 'utf8'), types, 'schema.ts is stale: run npm run openapi');
});
