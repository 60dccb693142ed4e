#!/usr/bin/env bash
# CI: the client as a user gets it. `npm pack` builds sdk/typescript into a tarball; the tarball is installed into
# an empty folder outside the repository (from the npm registry only, never this checkout's node_modules), where
# examples/quickstart.ts is type-checked against the packed declarations and run against a real server started
# from this checkout on a temporary SQLite file, after step 1 of the README's quickstart (sign up, register a
# company) made its company and key. Fails if any step fails; the server is stopped and the folder removed on exit.
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
  if (stray.length > 0 || !files.includes("dist/index.d.ts")) {
    console.error(`the tarball should hold dist, README.md and LICENSE only: ${stray.join(", ") || "no dist/index.d.ts"}`);
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
cp "$SDK/examples/quickstart.ts" .
npm install --no-audit --no-fund --loglevel=error "$TARBALL" tsx@4 typescript@7 @types/node@20
node -e 'const p = require("./node_modules/@billing-engine/client/package.json"); console.log(p.name, p.version, "dependencies:", JSON.stringify(p.dependencies))'
npx --no-install tsc -p tsconfig.json
echo "quickstart.ts type-checks against the packed declarations"

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
