// Guarantee: the console's checked-in API types (console/src/api/) are what scripts/openapi.ts generates from
// the server's routes today; after a route change `npm run openapi` must be run, or this fails.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { OPENAPI_TYPES, generate } from '../../scripts/openapi.js';

test('console/src/api/ matches the OpenAPI document the server builds now (run `npm run openapi` if not)', async () => {
  const { doc, types } = await generate();
  assert.ok(doc.paths?.['/v1/accounts/{account_id}/transactions'], 'the document has the routes');
  assert.equal(readFileSync(OPENAPI_TYPES, 'utf8'), types, 'schema.d.ts is stale: run npm run openapi');
});
