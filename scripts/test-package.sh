#!/usr/bin/env bash
# npm run test:package: what a consumer of the published package gets. Packs the tarball,
# installs it into fresh projects outside the repository, and checks each way of using it
# against a live server over HTTP: plain `node server.mjs`, `npx everest serve settings.json`
# (and on a journal with health, metrics and a SIGTERM that exits 0; with RATE_LIMIT_STORE on
# Redis, refused without the optional redis package and shared by two servers with it),
# Deno and Bun importing the installed package (each client its own rate-limit bucket and log
# address), a Worker built by wrangler from its own default wrangler.toml and served by
# `wrangler dev`, a Worker with nodejs_compat on the native mongodb driver (the MongoDB server at
# MONGODB_URI, as .ci/run starts it) and one whose DB_URI binding needs that driver but lacks its
# import (must not start), the Hono mount, the TypeScript consumer (0 errors under strict
# settings; the four typos must fail), the documentation's code blocks compiled against the
# installed declarations, and the unit suite from a copy of the repository with nothing beside it.
# On Node and on both Workers, a cursor resource's next link is followed too; on Node, Deno, Bun
# and the memory Worker, a change feed streams an insert and resumes from Last-Event-ID.
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
    # -s: the background job's redirection may not have made the log yet.
    url=$(grep -so "${READY:-}http://127\.0\.0\.1:[0-9]*" "$log" | head -1 | grep -o 'http://.*' || true)
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

# Cursor paging (the `pages` resource has pagination_cursor): a one-document page's next link
# answers with the second document, read by the module a paged resource imports on first use.
cursor_check() {
  local name=$1 base=$2 next
  curl -fsS -o /dev/null -X POST -H 'Content-Type: application/json' -d '[{"name": "c1"}, {"name": "c2"}]' "$base/pages" || fail "$name: POST /pages failed"
  next=$(curl -fsS "$base/pages?max_results=1" | node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => console.log(JSON.parse(s)._links?.next?.href ?? ""))')
  [[ "$next" == "pages?max_results=1&cursor="* ]] || fail "$name: no cursor in the next link of /pages ($next)"
  curl -fsS "$base/$next" | grep -q '"name": "c2"' || fail "$name: the cursor link $next did not answer the second page"
  echo "   $name: cursor paging follows its next link"
}

# The change feed (the `live` resource has change_feed): a stream opened with EventSource's Accept
# header gets the insert POSTed meanwhile; a reconnect with that event's id as Last-Event-ID gets
# the one POSTed after it, and not the first again. A third argument: the address to read from
# (Deno's and Bun's servers limit each address to 2 GETs, which clients() used up on 127.0.0.1).
feed_check() {
  local name=$1 base=$2 reader id
  local out="$WORK/feed-$name.txt"
  local from=(${3:+--interface "$3"})
  curl "${from[@]}" -sS -N --max-time 20 -H 'Accept: text/event-stream' "$base/live" >"$out" 2>/dev/null &
  reader=$!
  # -s: the background reader's redirection may not have made the file yet.
  for _ in $(seq 1 40); do grep -qs '^retry:' "$out" && break; sleep 0.25; done
  grep -qs '^retry:' "$out" || fail "$name: the feed did not open: $(cat "$out")"
  curl -fsS -o /dev/null -X POST -H 'Content-Type: application/json' -d "{\"name\": \"first-$name\"}" "$base/live" || fail "$name: POST /live failed"
  for _ in $(seq 1 40); do grep -q "first-$name" "$out" && break; sleep 0.25; done
  kill "$reader" 2>/dev/null || true
  grep -q '^event: insert$' "$out" && grep -q "^data: .*\"name\": \"first-$name\"" "$out" || fail "$name: the feed did not stream the insert: $(cat "$out")"
  id=$(grep -m1 '^id: ' "$out" | cut -c5-)
  curl -fsS -o /dev/null -X POST -H 'Content-Type: application/json' -d "{\"name\": \"second-$name\"}" "$base/live" || fail "$name: POST /live failed"
  curl "${from[@]}" -sS -N --max-time 3 -H 'Accept: text/event-stream' -H "Last-Event-ID: $id" "$base/live" >"$out.resumed" 2>/dev/null || true
  grep -q "second-$name" "$out.resumed" && ! grep -q "first-$name" "$out.resumed" ||
    fail "$name: resuming from $id did not give exactly what came after it: $(cat "$out.resumed")"
  echo "   $name: the change feed streams an insert and resumes from Last-Event-ID"
}

# Deno.serve(handler) and Bun.serve({ fetch: handler }) give the handler the client's address in
# their second argument: two addresses (all of 127.0.0.0/8 is this machine) get two rate-limit
# buckets and two addresses in the access log. The server's settings allow 2 GETs; check() did one.
clients() {
  local name=$1 base=$2 log=$3 status
  curl -fsS -o /dev/null "$base/people"
  status=$(curl -sS -o /dev/null -w '%{http_code}' "$base/people")
  [ "$status" = 429 ] || fail "$name: the third GET from 127.0.0.1 answered $status, not 429"
  status=$(curl -sS --interface 127.0.0.2 -o /dev/null -w '%{http_code}' "$base/people")
  [ "$status" = 200 ] || fail "$name: the first GET from 127.0.0.2 answered $status: it shares 127.0.0.1's bucket"
  grep -q '"client":"127.0.0.1","method":"GET"' "$log" && grep -q '"client":"127.0.0.2","method":"GET"' "$log" ||
    fail "$name: the access log does not name both clients: $(cat "$log")"
  echo "   $name: 127.0.0.1 limited (429) while 127.0.0.2 is served; both addresses in the access log"
}

# Serves wrangler dev in the current directory; prints its URL.
wrangler_dev() {
  READY="Ready on " start "$1" "$BIN/wrangler" dev --port "$(free_port)" --ip 127.0.0.1 --inspector-port 0 --log-level info
}

free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }

step "pack"
(cd "$ROOT" && npm pack --pack-destination "$WORK" >/dev/null 2>&1)
TARBALL=$(ls "$WORK"/everest-api-*.tgz)
# Nothing beside dist, the docs (their pictures too), the measurements the docs cite, examples.
tar -tzf "$TARBALL" | grep -v -e '^package/dist/' -e '^package/docs/[a-z-]*\.\(md\|png\)$' -e '^package/examples/' | sort | tr '\n' ' ' | grep -qx 'package/LICENSE package/README.md package/bench/README.md package/bench/VALIDATION.md package/package.json ' || fail "the tarball holds more than dist, docs, examples, README, LICENSE: $(tar -tzf "$TARBALL" | grep -v -e '^package/dist/' -e '^package/docs/' -e '^package/examples/' | tr '\n' ' ')"
# Every relative link of a Markdown file in it (README to docs/ and examples/, docs to their
# pictures) leads to a file in it, so they work in node_modules too.
UNPACKED="$WORK/unpacked"
mkdir -p "$UNPACKED" && tar -xzf "$TARBALL" -C "$UNPACKED"
BROKEN=$(node -e '
  const { readFileSync, existsSync } = require("node:fs");
  const { dirname, join } = require("node:path");
  const root = process.argv[1];
  const files = require("node:child_process").execFileSync("find", [root, "-name", "*.md", "-not", "-path", "*/node_modules/*"], { encoding: "utf8" }).trim().split("\n");
  for (const file of files) for (const [, target] of readFileSync(file, "utf8").matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z]+:|^#/i.test(target)) continue;
    const path = join(dirname(file), decodeURI(target.split("#")[0]));
    if (!existsSync(path)) console.log(`${file.slice(root.length + 1)} -> ${target}`);
  }' "$UNPACKED/package")
[ -z "$BROKEN" ] || fail "links in the tarball lead to files it lacks: $BROKEN"

SETTINGS='{"RESOURCE_METHODS": ["GET", "POST"], "DOMAIN": {"people": {"schema": {"name": {"type": "string"}}}, "pages": {"pagination_cursor": true, "schema": {"name": {"type": "string"}}}, "live": {"change_feed": true, "schema": {"name": {"type": "string"}}}}}'

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
NODE_URL=$(start "$WORK/node.log" node server.mjs)
check node "$NODE_URL"
cursor_check node "$NODE_URL"
feed_check node "$NODE_URL"

step "npx everest serve settings.json"
check cli "$(start "$WORK/cli.log" npx --no-install everest serve settings.json --port 0)"

step "createHandler on a file: journal, with NodeFileAccess from everest-api/node"
cat >journal.mjs <<'EOF'
import { createHandler } from "everest-api";
import { NodeFileAccess } from "everest-api/node";
const settings = { DB_URI: "file:consumer.jsonl", RESOURCE_METHODS: ["GET", "POST"], DOMAIN: { notes: { schema: { title: { type: "string" } } } } };
try {
  createHandler(settings);
  throw new Error("createHandler took a file: journal without file access");
} catch (error) {
  if (!/NodeFileAccess/.test(String(error))) throw error;
}
const files = new NodeFileAccess();
const first = createHandler(settings, { services: { files } });
const posted = await first(new Request("http://consumer.test/notes", { method: "POST", headers: { "content-type": "application/json" }, body: '{"title": "kept"}' }));
if (posted.status !== 201) throw new Error(`POST: ${posted.status} ${await posted.text()}`);
await first.app.close();
const second = createHandler(settings, { services: { files } });
const titles = (await (await second(new Request("http://consumer.test/notes"))).json())._items.map((note) => note.title);
if (JSON.stringify(titles) !== '["kept"]') throw new Error(`replayed: ${JSON.stringify(titles)}`);
await second.app.close();
EOF
node journal.mjs || fail "createHandler on a file: journal"
rm -f consumer.jsonl consumer.jsonl.lock
echo "   refused without file access, then written, closed and replayed"

# Serves in the background of this shell, so that its exit status can be waited for; sets PID and URL.
serve_here() {
  local log=$1; shift
  "$@" >"$log" 2>&1 &
  PID=$!
  URL=""
  for _ in $(seq 1 120); do
    URL=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$log" | head -1 || true)
    [ -n "$URL" ] && return
    kill -0 "$PID" 2>/dev/null || { cat "$log" >&2; fail "$* exited before serving"; }
    sleep 0.5
  done
  cat "$log" >&2
  fail "$* did not serve"
}

# The command itself, not npx: npx would stand between the signal and the server, as a
# supervisor's unit runs it (docs/deploy.md).
step "health, metrics and SIGTERM: node_modules/.bin/everest serve on a journal"
node -e 'console.log(JSON.stringify({ ...JSON.parse(process.argv[1]), HEALTH_ENDPOINT: "health", METRICS_ENDPOINT: "metrics" }))' "$SETTINGS" >operated.json
serve_here "$WORK/operated.log" node_modules/.bin/everest serve operated.json --port 0 --db file:journal.jsonl
check operated "$URL"
curl -fsS "$URL/health/ready" | grep -q '^{"status":"ok","checks":{"database":"ok"}}$' || fail "readiness did not answer ok: $(curl -sS "$URL/health/ready")"
curl -fsS "$URL/metrics" | grep -q '^everest_http_requests_total{resource="people",endpoint="collection",method="POST",status="201"} 1$' ||
  fail "the metrics do not count the POST: $(curl -sS "$URL/metrics")"
kill -TERM "$PID"
status=0
wait "$PID" || status=$?
[ "$status" = 0 ] || fail "SIGTERM: the server exited with $status, not 0: $(cat "$WORK/operated.log")"
[ ! -s journal.jsonl.lock ] || fail "SIGTERM: the journal's lock still names a holder: $(cat journal.jsonl.lock)"
serve_here "$WORK/restarted.log" node_modules/.bin/everest serve operated.json --port 0 --db file:journal.jsonl
curl -fsS "$URL/people" | grep -q '"name": "operated"' || fail "the restarted server lost the write"
kill -TERM "$PID"
wait "$PID"
echo "   health 200, metrics count the POST, SIGTERM exits 0 with the journal released and kept"

step "RATE_LIMIT_STORE redis://: refused without the optional redis package, shared with it"
REDIS_PORT=$(free_port)
node -e 'console.log(JSON.stringify({ ...JSON.parse(process.argv[1]), RATE_LIMIT_GET: [3, 3600], RATE_LIMIT_STORE: `redis://127.0.0.1:${process.argv[2]}` }))' "$SETTINGS" "$REDIS_PORT" >redis.json
if npx --no-install everest serve redis.json --port 0 >"$WORK/no-redis.log" 2>&1; then fail "a server needing the redis package started without it"; fi
grep -q "which needs the redis package: npm install redis" "$WORK/no-redis.log" || fail "no word of the redis package: $(cat "$WORK/no-redis.log")"
REDIS_APP="$WORK/redis-app"
mkdir -p "$REDIS_APP"
cp redis.json "$REDIS_APP/"
cd "$REDIS_APP"
echo '{"name": "redis-consumer", "private": true, "type": "module"}' >package.json
npm install --no-audit --no-fund --silent "$TARBALL" redis >/dev/null
if npx --no-install everest serve redis.json --port 0 >"$WORK/redis-down.log" 2>&1; then fail "a server started on a Redis nobody runs"; fi
grep -q "the Redis server at redis://127.0.0.1:$REDIS_PORT cannot be reached" "$WORK/redis-down.log" || fail "no word of the unreachable Redis: $(cat "$WORK/redis-down.log")"
setsid redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no >"$WORK/redis.log" 2>&1 &
echo "$!" >>"$WORK/pids"
for _ in $(seq 1 50); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
FIRST=$(start "$WORK/redis-1.log" npx --no-install everest serve redis.json --port 0)
SECOND=$(start "$WORK/redis-2.log" npx --no-install everest serve redis.json --port 0)
# An hour's window that ends among the four GETs would let a fourth through: wait out its last seconds.
left=$((3600 - $(date +%s) % 3600))
[ "$left" -gt 5 ] || sleep $((left + 1))
statuses=""
for base in "$FIRST" "$SECOND" "$FIRST" "$SECOND"; do statuses="$statuses $(curl -sS -o /dev/null -w '%{http_code}' "$base/people")"; done
[ "$statuses" = " 200 200 200 429" ] || fail "two servers sharing Redis answered$statuses to four GETs with a limit of 3"
echo "   without redis: refused, naming the package; with it: an unreachable server refused, two servers share one limit"
cd "$APP"

node -e 'console.log(JSON.stringify({ ...JSON.parse(process.argv[1]), RATE_LIMIT_GET: [2, 60], ACCESS_LOG: "json" }))' "$SETTINGS" >limited.json

step "Deno"
cat >deno.mjs <<'EOF'
import { createHandler } from "everest-api";
const handler = createHandler(JSON.parse(await Deno.readTextFile("limited.json")));
Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: ({ port }) => console.log(`http://127.0.0.1:${port}`) }, handler);
EOF
DENO_URL=$(start "$WORK/deno.log" "$BIN/deno" run --allow-net --allow-read --allow-env --allow-sys deno.mjs)
check deno "$DENO_URL"
clients deno "$DENO_URL" "$WORK/deno.log"
feed_check deno "$DENO_URL" 127.0.0.3

step "Bun"
cat >bun.mjs <<'EOF'
import { createHandler } from "everest-api";
const handler = createHandler(await Bun.file("limited.json").json());
const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: handler });
console.log(`http://127.0.0.1:${server.port}`);
EOF
BUN_URL=$(start "$WORK/bun.log" "$BIN/bun" bun.mjs)
check bun "$BUN_URL"
clients bun "$BUN_URL" "$WORK/bun.log"
feed_check bun "$BUN_URL" 127.0.0.3

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
import { BasicAuth, createHandler, type FieldAccessRequest, type Settings } from "everest-api";
import { serve } from "everest-api/node";
import { createWorker } from "everest-api/workers";
import { createDataApiHandler } from "everest-api/gateway";
import "everest-api/mongodb";

const ownSalary = ({ mode, user, document, allowed }: FieldAccessRequest) => allowed || (mode === "read" && document?.name === user);
const settings: Settings = {
  RESOURCE_METHODS: ["GET", "POST"],
  PAGINATION_LIMIT: 20,
  MONGO1_DBNAME: "other",
  TENANT_A_DB_URI: "mongodb://localhost/a",
  AUTH: new BasicAuth({ users: { hana: { password: "pw", roles: ["hr"] } } }),
  DOMAIN: {
    people: {
      item_methods: ["GET"],
      schema: {
        name: { type: "string", unique: true },
        salary: { type: "integer", allowed_read_roles: ["hr"], allowed_write_roles: ["hr"], field_access: ownSalary },
      },
    },
  },
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

step "the documentation's code against the installed declarations"
(cd "$ROOT" && node --import tsx scripts/doc-samples.ts "$APP") || fail "the documentation's code does not compile against the package"

step "Worker: wrangler's default build from the consumer's own wrangler.toml, wrangler dev"
WORKER="$WORK/worker"
mkdir -p "$WORKER/src"
cd "$WORKER"
echo '{"name": "worker", "private": true, "type": "module"}' >package.json
npm install --no-audit --no-fund --silent "$TARBALL" >/dev/null
printf 'name = "everest-consumer"\nmain = "src/worker.js"\ncompatibility_date = "2025-09-01"\n' >wrangler.toml
cat >src/worker.js <<'EOF'
import { createWorker } from "everest-api/workers";
export default createWorker({ RESOURCE_METHODS: ["GET", "POST"], DOMAIN: { people: { schema: { name: { type: "string" } } }, pages: { pagination_cursor: true, schema: { name: { type: "string" } } }, live: { change_feed: true, schema: { name: { type: "string" } } } } });
EOF
WORKER_URL=$(wrangler_dev "$WORK/worker.log")
check worker "$WORKER_URL"
cursor_check worker "$WORKER_URL"
feed_check worker "$WORKER_URL"

step "Worker with nodejs_compat on the native mongodb driver, wrangler dev"
[ -n "${MONGODB_URI:-}" ] || fail "MONGODB_URI is not set: start a MongoDB server (.ci/run starts the emulator) and export its URI"
MONGO_WORKER="$WORK/mongo-worker"
mkdir -p "$MONGO_WORKER/src"
cd "$MONGO_WORKER"
echo '{"name": "mongo-worker", "private": true, "type": "module"}' >package.json
npm install --no-audit --no-fund --silent "$TARBALL" mongodb >/dev/null
printf 'name = "everest-mongodb"\nmain = "src/worker.js"\ncompatibility_date = "2025-09-01"\ncompatibility_flags = ["nodejs_compat"]\n' >wrangler.toml
DATABASE="package_$$"
node -e 'console.log(`import "everest-api/mongodb";
import { createWorker } from "everest-api/workers";
export default createWorker(${JSON.stringify({ ...JSON.parse(process.argv[1]), DB_URI: process.argv[2], DB_NAME: process.argv[3] })});`)' "$SETTINGS" "$MONGODB_URI" "$DATABASE" >src/worker.js
MONGO_URL=$(wrangler_dev "$WORK/mongo-worker.log")
# Twice: a request waiting on the first one's connection would hang (Workers tie sockets to requests).
check mongodb-worker "$MONGO_URL"
check mongodb-worker-again "$MONGO_URL"
cursor_check mongodb-worker "$MONGO_URL"
stored=$(node --input-type=module -e "
import { MongoClient } from 'mongodb';
const client = await MongoClient.connect(process.argv[1]);
const db = client.db(process.argv[2]);
console.log(await db.collection('people').countDocuments());
await db.dropDatabase();
await client.close();" "$MONGODB_URI" "$DATABASE")
[ "$stored" = 2 ] || fail "the mongodb Worker's database $DATABASE holds $stored people, not 2"
echo "   mongodb-worker: both people are in MongoDB at $MONGODB_URI, database $DATABASE"

step "Worker whose DB_URI binding names MongoDB, without importing everest-api/mongodb: refused at start-up"
# The binding, not the settings, selects MongoDB: wrangler's build resolves the package's workerd
# entry, which hands createWorker the bindings as the module loads.
printf '[vars]\nDB_URI = "%s"\n' "$MONGODB_URI" >>wrangler.toml
node -e 'console.log(`import { createWorker } from "everest-api/workers";
export default createWorker(${process.argv[1]});`)' "$SETTINGS" >src/worker.js
setsid "$BIN/wrangler" dev --port "$(free_port)" --ip 127.0.0.1 --inspector-port 0 --log-level info >"$WORK/no-driver.log" 2>&1 </dev/null &
echo "$!" >>"$WORK/pids"
for _ in $(seq 1 120); do
  kill -0 "$!" 2>/dev/null || break
  grep -qs "Ready on " "$WORK/no-driver.log" && break
  sleep 0.5
done
grep -q 'the mongodb driver is not in this bundle' "$WORK/no-driver.log" && grep -q 'failed to start' "$WORK/no-driver.log" ||
  { cat "$WORK/no-driver.log" >&2; fail "a Worker lacking the mongodb driver was not refused at start-up"; }
echo "   no-driver: the Workers runtime failed to start, naming the mongodb driver and the import to add"

step "the unit suite from a copy of the repository with nothing beside it"
COPY="$WORK/alone/everest"
mkdir -p "$COPY"
(cd "$ROOT" && git ls-files -z | xargs -0 cp --parents -t "$COPY")
ln -s "$ROOT/node_modules" "$COPY/node_modules"
(cd "$COPY" && env -u MONGODB_URI -u MONGODB_EMULATOR npx --no-install vitest run >"$WORK/alone.log" 2>&1) || { tail -40 "$WORK/alone.log"; fail "the unit suite fails in a lone copy"; }
grep -E 'Test Files|Tests ' "$WORK/alone.log" | sed 's/^/   /'

echo "test:package: all passed"
