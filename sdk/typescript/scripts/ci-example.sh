#!/usr/bin/env bash
# CI: the client as a user gets it. `npm pack` builds sdk/typescript into a tarball; the tarball is installed into
# an empty folder outside the repository (from the npm registry only, never this checkout's node_modules), where
# examples/quickstart.ts is type-checked against the packed declarations and run against a real server started
# from this checkout on a temporary SQLite file, after step 1 of the README's quickstart (sign up, register a
# company) made its company and key. The CommonJS build is proved the same way: a .cts file and
# examples/quickstart.cjs are type-checked against the `require` declarations, and quickstart.cjs is run with plain
# `node` against the same server, require() of ES modules switched off where Node.js has it (as on Node.js 20.0 to
# 20.18). Fails if any step fails; the server is stopped and the folder removed on exit.
set -euo pipefail
SDK="$(cd "$(dirname "$0")/.." && pwd)"
ROOT="$(cd "$SDK/../.." && pwd)"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/billing-sdk-ci.XXXXXX")"
SERVER_PID=""

cleanup() {
  local status=$?
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  if [ "$status" -ne 0 ] && [ -f "$WORK/server.log" ]; then
    echo "--- server log" >&2
    tail -n 50 "$WORK/server.log" >&2
  fi
  rm -rf "$WORK"
  exit "$status"
}
trap cleanup EXIT

echo "== npm pack (sdk/typescript)"
PACKED="$(cd "$SDK" && npm pack --json --pack-destination "$WORK")"
TARBALL="$WORK/$(node -e 'const p = JSON.parse(process.argv[1])[0]; console.log(p.filename)' "$PACKED")"
node -e '
  const p = JSON.parse(process.argv[1])[0];
  console.log(`${p.filename}: ${p.size} bytes packed, ${p.unpackedSize} unpacked, ${p.entryCount} files`);
  for (const f of p.files) console.log(`  ${f.path} (${f.size})`);
' "$PACKED"
node -e '
  const files = JSON.parse(process.argv[1])[0].files.map((f) => f.path);
  const stray = files.filter((f) => !/^(dist\/.*|README\.md|LICENSE|package\.json)$/.test(f));
  if (stray.length > 0) {
    console.error(`the tarball should hold dist, README.md and LICENSE only: ${stray.join(", ")}`);
    process.exit(1);
  }
  // Both builds: ESM in dist/, CommonJS in dist/cjs/ (its package.json says so to Node.js and TypeScript).
  const wanted = ["index.js", "index.d.ts", "cjs/index.js", "cjs/index.d.ts", "cjs/package.json"];
  const missing = wanted.map((f) => `dist/${f}`).filter((f) => !files.includes(f));
  if (missing.length > 0) {
    console.error(`the tarball lacks ${missing.join(", ")}`);
    process.exit(1);
  }
' "$PACKED"

echo "== install into an empty folder"
mkdir "$WORK/app"
cd "$WORK/app"
cat >package.json <<'JSON'
{ "name": "billing-client-example", "private": true, "type": "module" }
JSON
cat >tsconfig.json <<'JSON'
{
  "compilerOptions": {
    "target": "ES2022",
    "module": "NodeNext",
    "moduleResolution": "NodeNext",
    "strict": true,
    "noEmit": true,
    "types": ["node"]
  },
  "include": ["quickstart.ts"]
}
JSON
cp "$SDK/examples/quickstart.ts" "$SDK/examples/quickstart.cjs" .
npm install --no-audit --no-fund --loglevel=error "$TARBALL" tsx@4 typescript@7 @types/node@20
node -e '
  const p = require("./node_modules/@billing-engine/client/package.json");
  console.log(p.name, p.version, "dependencies:", JSON.stringify(p.dependencies));
'
npx --no-install tsc -p tsconfig.json
echo "quickstart.ts type-checks against the packed declarations"

echo "== the require declarations: a .cts file and quickstart.cjs, type-checked"
# A .cts file is CommonJS whatever the package.json says: its imports compile to require() and TypeScript resolves
# them with the `require` condition, as it does the require() calls of quickstart.cjs (checkJs). The
# @ts-expect-error lines prove the types are the client's, not `any`; the file list, that they are dist/cjs's.
cat >require.cts <<'TS'
import client = require('@billing-engine/client');
import { type Balance, BillingError } from '@billing-engine/client';

const billing: client.Billing = new client.Billing({ baseUrl: 'http://127.0.0.1:8080', companyId: 'c', apiKey: 'k' });

export async function available(accountId: string): Promise<number> {
  try {
    const balance: Balance = await billing.balances.retrieve(accountId, 'tokens');
    // @ts-expect-error: a balance has no such field
    balance.no_such_field;
    return balance.available;
  } catch (err) {
    if (err instanceof BillingError && err.status === 404) return 0;
    throw err;
  }
}
// @ts-expect-error: the options are checked
new client.Billing({ baseUrl: 'http://127.0.0.1:8080' });
TS
cat >tsconfig.cjs.json <<'JSON'
{
  "compilerOptions": {
    "target": "ES2022",
    "module": "NodeNext",
    "moduleResolution": "NodeNext",
    "strict": true,
    "allowJs": true,
    "checkJs": true,
    "noEmit": true,
    "types": ["node"]
  },
  "include": ["require.cts", "quickstart.cjs"]
}
JSON
npx --no-install tsc -p tsconfig.cjs.json --listFiles >"$WORK/cjs-files.txt" || {
  cat "$WORK/cjs-files.txt" >&2
  exit 1
}
if ! grep -q '/@billing-engine/client/dist/cjs/index\.d\.ts$' "$WORK/cjs-files.txt" \
  || grep -q '/@billing-engine/client/dist/index\.d\.ts$' "$WORK/cjs-files.txt"; then
  echo "require('@billing-engine/client') should be typed by dist/cjs/index.d.ts alone; TypeScript read:" >&2
  grep '@billing-engine/client' "$WORK/cjs-files.txt" >&2
  exit 1
fi
echo "require.cts and quickstart.cjs type-check against the packed CommonJS declarations (dist/cjs)"

echo "== a server on a temporary SQLite file"
(cd "$ROOT" && DATABASE_URL="sqlite:$WORK/billing.sqlite" HOST=127.0.0.1 PORT=0 LOG_LEVEL=warn \
  exec node --import tsx src/main.ts) >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
BASE=""
for _ in $(seq 1 300); do
  BASE="$(sed -n 's/^billing engine starting on \(http:[^ ]*\).*/\1/p' "$WORK/server.log" | head -n 1)"
  if [ -n "$BASE" ] && curl -fsS "$BASE/readyz" >/dev/null 2>&1; then break; fi
  kill -0 "$SERVER_PID" 2>/dev/null || { echo "the server exited" >&2; exit 1; }
  sleep 0.2
done
curl -fsS "$BASE/readyz" >/dev/null
echo "server ready at $BASE"

echo "== step 1 of the quickstart: sign up, register a company"
EMAIL="ada-$(date +%s)-$$@example.com"
curl -fsS -X POST "$BASE/v1/users" -H 'content-type: application/json' \
  -d "{\"name\":\"Ada Lovelace\",\"email\":\"$EMAIL\",\"password\":\"correct horse\"}" >/dev/null
COMPANY="$(curl -fsS -X POST "$BASE/v1/companies" -u "$EMAIL:correct horse" -H 'content-type: application/json' \
  -d '{"name":"Acme"}')"
COMPANY_ID="$(node -e 'console.log(JSON.parse(process.argv[1]).data.company_id)' "$COMPANY")"
API_KEY="$(node -e 'console.log(JSON.parse(process.argv[1]).data.api_key)' "$COMPANY")"

echo "== examples/quickstart.ts, from the installed package"
BILLING_URL="$BASE" BILLING_COMPANY_ID="$COMPANY_ID" BILLING_API_KEY="$API_KEY" npx --no-install tsx quickstart.ts

echo "== examples/quickstart.cjs, from the installed package, with plain node"
# Node.js 20.0 to 20.18 cannot require() an ES module; later ones can, unless told not to. Telling them not to
# proves that the CommonJS build, and what it requires (openapi-fetch, standardwebhooks), is CommonJS throughout.
NO_REQUIRE_ESM=""
if node --no-experimental-require-module -e '' 2>/dev/null; then NO_REQUIRE_ESM="--no-experimental-require-module"; fi
BILLING_URL="$BASE" BILLING_COMPANY_ID="$COMPANY_ID" BILLING_API_KEY="$API_KEY" \
  node ${NO_REQUIRE_ESM:+"$NO_REQUIRE_ESM"} quickstart.cjs
