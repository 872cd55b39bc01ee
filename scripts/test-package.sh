#!/usr/bin/env bash
# npm run test:package: what a consumer of the published package gets. Packs the tarball,
# installs it into fresh projects outside the repository, and checks each way of using it
# against a live server over HTTP: plain `node server.mjs`, `npx everest serve settings.json`,
# Deno and Bun importing the installed package, a Worker built by wrangler from its own default
# wrangler.toml and served by `wrangler dev`, the Hono mount, the TypeScript consumer (0 errors
# under strict settings; the four typos must fail), and the unit suite from a copy of the
# repository with nothing beside it.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN="$ROOT/node_modules/.bin"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/everest-package.XXXXXX")
# start() runs inside $(…), a subshell, so the servers' process groups are recorded in a file.
cleanup() {
  while read -r pid; do kill -- "-$pid" 2>/dev/null || true; done < <(cat "$WORK/pids" 2>/dev/null || true)
  rm -rf "$WORK"
}
trap cleanup EXIT

step() { echo "== $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

# Starts a command in its own process group; waits for the first http://127.0.0.1:PORT it prints.
start() {
  local log=$1; shift
  setsid "$@" >"$log" 2>&1 &
  echo "$!" >>"$WORK/pids"
  for _ in $(seq 1 120); do
    local url
    url=$(grep -o "${READY:-}http://127\.0\.0\.1:[0-9]*" "$log" | head -1 | grep -o 'http://.*' || true)
    if [ -n "$url" ]; then echo "$url"; return; fi
    kill -0 "$!" 2>/dev/null || { cat "$log" >&2; fail "$* exited before serving"; }
    sleep 0.5
  done
  cat "$log" >&2
  fail "$* did not serve"
}

# POST a person, then GET the collection: both must answer as everest does.
check() {
  local name=$1 base=$2
  local posted listed
  posted=$(curl -fsS -X POST -H 'Content-Type: application/json' -d "{\"name\": \"$name\"}" "$base/people")
  echo "$posted" | grep -q '"_status": "OK"' || fail "$name: POST answered $posted"
  listed=$(curl -fsS "$base/people")
  echo "$listed" | grep -q "\"name\": \"$name\"" || fail "$name: GET answered $listed"
  echo "   $name: POST 201 and GET at $base"
}

free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }

step "pack"
(cd "$ROOT" && npm pack --pack-destination "$WORK" >/dev/null 2>&1)
TARBALL=$(ls "$WORK"/everest-api-*.tgz)
tar -tzf "$TARBALL" | grep -v '^package/dist/' | sort | tr '\n' ' ' | grep -qx 'package/LICENSE package/README.md package/package.json ' || fail "the tarball holds more than dist, README, LICENSE: $(tar -tzf "$TARBALL" | grep -v '^package/dist/' | tr '\n' ' ')"

SETTINGS='{"RESOURCE_METHODS": ["GET", "POST"], "DOMAIN": {"people": {"schema": {"name": {"type": "string"}}}}}'

step "install into a fresh project"
APP="$WORK/app"
mkdir -p "$APP/src"
cd "$APP"
echo '{"name": "consumer", "private": true, "type": "module"}' >package.json
npm install --no-audit --no-fund --silent "$TARBALL" hono typescript@5.9 @types/node@20 mongodb >/dev/null
echo "$SETTINGS" >settings.json

step "node server.mjs"
cat >server.mjs <<'EOF'
import { readFileSync } from "node:fs";
import { createHandler } from "everest-api";
import { serve } from "everest-api/node";
const { url } = await serve(createHandler(JSON.parse(readFileSync("settings.json", "utf8"))), { port: 0 });
console.log(url);
EOF
check node "$(start "$WORK/node.log" node server.mjs)"

step "npx everest serve settings.json"
check cli "$(start "$WORK/cli.log" npx --no-install everest serve settings.json --port 0)"

step "Deno"
cat >deno.mjs <<'EOF'
import { createHandler } from "everest-api";
const handler = createHandler(JSON.parse(await Deno.readTextFile("settings.json")));
Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: ({ port }) => console.log(`http://127.0.0.1:${port}`) }, handler);
EOF
check deno "$(start "$WORK/deno.log" "$BIN/deno" run --allow-net --allow-read --allow-env --allow-sys deno.mjs)"

step "Bun"
cat >bun.mjs <<'EOF'
import { createHandler } from "everest-api";
const handler = createHandler(await Bun.file("settings.json").json());
const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: handler });
console.log(`http://127.0.0.1:${server.port}`);
EOF
check bun "$(start "$WORK/bun.log" "$BIN/bun" bun.mjs)"

step "Hono mount"
cat >hono.mjs <<'EOF'
import { Hono } from "hono";
import { mount } from "hono/mount";
import { createHandler } from "everest-api";
import { serve } from "everest-api/node";
const everest = createHandler({ URL_PREFIX: "api", RESOURCE_METHODS: ["GET", "POST"], DOMAIN: { people: { schema: { name: { type: "string" } } } } });
const app = new Hono();
app.all("/api/*", mount(everest, { replaceRequest: false }));
const { url } = await serve((request) => app.fetch(request), { port: 0 });
console.log(url);
EOF
check hono "$(start "$WORK/hono.log" node hono.mjs)/api"

step "TypeScript consumer"
cat >src/app.ts <<'EOF'
import { createHandler, type Settings } from "everest-api";
import { serve } from "everest-api/node";
import { createWorker } from "everest-api/workers";
import { createDataApiHandler } from "everest-api/gateway";
import "everest-api/mongodb";

const settings: Settings = {
  RESOURCE_METHODS: ["GET", "POST"],
  PAGINATION_LIMIT: 20,
  MONGO1_DBNAME: "other",
  TENANT_A_DB_URI: "mongodb://localhost/a",
  DOMAIN: { people: { item_methods: ["GET"], schema: { name: { type: "string", unique: true } } } },
};
export const worker = createWorker(settings);
export const gateway = createDataApiHandler;
const running = await serve(createHandler(settings), { port: 0 });
await running.close();
EOF
cat >src/typos.ts <<'EOF'
import type { Settings } from "everest-api";
export const a: Settings = { PAGINATON_LIMIT: 20 };
export const b: Settings = { DOMAIN: { people: { item_methds: ["GET"] } } };
export const c: Settings = { DOMAIN: { people: { schema: { name: { type: "string", uniqe: true } } } } };
export const d: Settings = { DOMAIN: { people: { schema: { name: { type: "strin" } } } } };
EOF
for resolution in nodenext bundler; do
  module=$([ "$resolution" = nodenext ] && echo nodenext || echo esnext)
  for file in app typos; do
    cat >"tsconfig.$resolution.$file.json" <<EOF
{ "compilerOptions": { "target": "ES2022", "module": "$module", "moduleResolution": "$resolution", "lib": ["ES2023", "DOM"],
  "types": ["node"], "strict": true, "exactOptionalPropertyTypes": true, "noUncheckedIndexedAccess": true, "noEmit": true },
  "files": ["src/$file.ts"] }
EOF
  done
  npx --no-install tsc -p "tsconfig.$resolution.app.json" || fail "the TypeScript consumer ($resolution) has errors"
  errors=$(npx --no-install tsc -p "tsconfig.$resolution.typos.json" | grep -c 'error TS' || true)
  [ "$errors" = 4 ] || fail "the four typos gave $errors errors ($resolution), not 4"
  echo "   $resolution: 0 errors; the four typos: 4 errors"
done

step "Worker: wrangler's default build from the consumer's own wrangler.toml, wrangler dev"
WORKER="$WORK/worker"
mkdir -p "$WORKER/src"
cd "$WORKER"
echo '{"name": "worker", "private": true, "type": "module"}' >package.json
npm install --no-audit --no-fund --silent "$TARBALL" >/dev/null
printf 'name = "everest-consumer"\nmain = "src/worker.js"\ncompatibility_date = "2025-09-01"\n' >wrangler.toml
cat >src/worker.js <<'EOF'
import { createWorker } from "everest-api/workers";
export default createWorker({ RESOURCE_METHODS: ["GET", "POST"], DOMAIN: { people: { schema: { name: { type: "string" } } } } });
EOF
PORT=$(free_port)
check worker "$(READY="Ready on " start "$WORK/worker.log" "$BIN/wrangler" dev --port "$PORT" --ip 127.0.0.1 --inspector-port 0 --log-level info)"

step "the unit suite from a copy of the repository with nothing beside it"
COPY="$WORK/alone/everest"
mkdir -p "$COPY"
(cd "$ROOT" && git ls-files -z | xargs -0 cp --parents -t "$COPY")
ln -s "$ROOT/node_modules" "$COPY/node_modules"
(cd "$COPY" && env -u MONGODB_URI -u MONGODB_EMULATOR npx --no-install vitest run >"$WORK/alone.log" 2>&1) || { tail -40 "$WORK/alone.log"; fail "the unit suite fails in a lone copy"; }
grep -E 'Test Files|Tests ' "$WORK/alone.log" | sed 's/^/   /'

echo "test:package: all passed"
