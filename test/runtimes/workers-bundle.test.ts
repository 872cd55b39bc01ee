// The Workers bundle of the example (scripts/build-worker.ts): what only some deployments need
// stays out of what the example loads, and that stays within the target below.
// `npm run bench` (bench/bundle.ts) prints the sizes.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildWorker, loadedWith, type WorkerBuild, type WorkerModule } from "../../scripts/build-worker.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
// Issue 7's 100 KB, plus the 4 KB of field rules that no split could take out of the entry
// (bench/README.md), plus the 1.3 KB that running in production adds to every service (requests
// in flight, the ordered shutdown and its stream registry, the health and metrics routes and
// their start-up check, docs/contracts.md §7), plus the change feed the example serves (issue
// 31): the driver's change log and the feed's side of the stream registry; the stream endpoint,
// metrics, the endpoints' answers, the shutdown's steps and Redis load only where they are used;
// plus 0.75 KB for the reads of issue 36 that answer from a document's JSON kept per stored
// version: the glue in GET, shared reads and the loader (the kept JSON itself loads on first use).
// Plus what update operators and writes by filter (issue 33) cost while they are off: 115,158 →
// 120,091 bytes. Their methods and compiler load on first use (src/methods/opt-in-loader.ts);
// what stays is about 2.1 KB of settings checks, dispatch, the data layer's and the drivers'
// atomic updates, and 2.8 KB of the entry split into more chunks by that module of its own —
// still less than importing it (123,550), or than splitting it further (122,063 with the
// operator compiler alone loaded on use). Until the opt-in features' budget is decided. Plus
// 0.1 KB for a PATCH that reads the stored version instead of a copy where nothing of the
// application's is handed it (issue 36: 1.3 KB less garbage per PATCH, its handler 3% faster on
// Bun and 9-15% on Deno, within the noise on Node; bench/README.md). Plus 0.1 KB for query
// parameters parsed only when a request has a query string (src/scope.ts: GET item's server CPU
// 2.4% less on Deno and Node, PATCH 2% on Deno, side by side; bench/README.md). Plus 0.1 KB for
// a kept page handed to Responses as text and an unfiltered page read from its place, not
// through generators (the collection page's server CPU 11% less on Deno, 4-6% on Node; a page
// at any depth costs what the first does; bench/README.md, issue 36's ninth pass). Plus 0.4 KB
// for what users running it found (2026-11-28): dotted keys judged by field rules and a PATCH by
// filter keeping each document's hidden values, numbers past a double's range refused, a
// `file:` journal without file access refused at createHandler, NUL bytes in field names; and
// 0.4 KB more for a soft-deleted document's unique values checked when a PATCH restores it, the
// live document found first by an additional lookup, a PATCH keeping a sub-resource's URL
// segments, the oplog's start-up warning about a log anyone may read. Plus 0.1 KB for unpaired
// surrogates refused in bodies (no UTF-8 store keeps them) and a sub-resource's URL segments kept
// by update operators and writes by filter. Plus 0.4 KB for the unique values a write holds from
// its lookup to its write where no index guards them (soft delete, datasource filters), which
// concurrent POSTs of one value otherwise both stored. Plus 0.1 KB for more of what they found:
// a dotted key's parts counted toward MAX_JSON_DEPTH (forms too), sorts of more than 32 fields
// refused, X-HTTP-Method-Override to HEAD refused; and liveness asking the drivers for a fault
// only a restart mends (the journal's); Int64 values past 2^53 written with every digit. Plus
// 0.25 KB for floats written as Python's repr() writes them in every JSON body and ETag (1e-07,
// 1e+20, -0.0), which moved the XML renderer's float writer into the entry. Plus 0.05 KB for the
// pool's set of opened drivers, so that liveness never waits for one still opening. Plus 0.3 KB
// for hook names checked when registered (src/events/hooks.ts): a misspelt event or resource
// registered a hook that silently never fired. Plus 0.1 KB for a request URL that names no
// valid host (Deno and Bun pass `Host: a b` on) answered 400, where it was a 500 after the write.
// Plus 0.1 KB for aggregation results withheld from at any depth (a nested $$ROOT leaked the
// fields a caller may not read) and the oplog's warning naming the fix that applies. Plus 0.1 KB
// for start-up and readiness asking a store that may refuse collections (the Data API gateway)
// for those the settings use: a misconfigured allow-list otherwise answered 503 after a write
// was stored. Plus 0.1 KB for where's dotted keys counted toward MAX_JSON_DEPTH (SQLite answered
// 500 past 1,000 parts, after seconds of blocking work), a `$not` that is no operator expression
// refused as MongoDB refuses it, and application/x-xml without a charset, as Werkzeug sends it.
// Plus 0.1 KB for an id field the schema declares validated by PUT as sent (a required one
// refused every replacement) and never a duplicate of itself, and a datasource projection that
// only excludes applied on a resource serving unknown fields (it hid nothing); the embedded
// store's dotted projections, now applied in the document's field order by everest's own path
// projection, no longer load mingo's projection operators (0.27 KB less). Plus 0.15 KB for the
// field rules a resource holds from another over the same collection, for the fields it does not
// declare: a `where` there read the values the other withheld. Plus 0.1 KB for a `$geometry`
// with a longitude or latitude out of bounds refused as MongoDB refuses it (the embedded store
// answered it). Plus 0.2 KB for the embedded store dropping the indexes no resource declares
// any more (a `unique` removed from the settings went on refusing duplicates, with no way to drop
// its index): the driver's drop and its journal record; the data layer's side loads on first use.
// Plus 0.1 KB for the media endpoint serving a file only to a caller who may read the item that
// holds it (another user's, under auth_field, or a restricted resource's file was anyone's),
// and a POST to a sub-resource URL naming another user refused as its GET is. Plus 0.3 KB for a
// version's file checked against its document's owner (another user's versioned files were
// anyone's) and `mongo_indexes` read in each of Eve's forms, one reading shared by the data
// layer, cursor orders and the start-up check (Eve's (keys, options) tuple stopped start-up
// with "object is not iterable", and `{key, unique: true}` built a plain index without a word).
// Plus 0.05 KB for sort and projection paths counted toward MAX_JSON_DEPTH (a projection of
// 20,000 parts overflowed the stack, a 500 after seconds of work). Plus 0.1 KB for MongoDB's
// `$mod` (mingo's matched the string "1" and null) and for sorted reads in MongoDB's order, its
// module loaded by the first (mingo's sort took an array's least element descending too). Plus
// 0.05 KB for on_pre and on_post hooks that may read the request's or the response's body (it
// was taken from everest: a 500 in process, through Hono, on Deno, Bun and Workers). Plus 0.05 KB
// for aggregation parameters refused `$getField` (it read fields the caller may not see) and
// expressions without a bound (`$range` of 10^8 ran the process out of heap). Plus 0.05 KB for
// a field datasource.projection hides read when a client asks for it on a resource with field
// rules (it was never read, so never shown). Plus 0.1 KB for a sub-field's `$set` judged beside
// its siblings (its dependencies were always refused), an operator PATCH's ETag chained to the
// last as a plain PATCH's is, and `$near` refused under `$or`/`$not` and a negative circle, as
// MongoDB refuses them. Plus 0.1 KB for a legacy coordinate pair's bounds, and for the fields a
// client asks for beyond a resource's default projection merged into it without naming a path
// and one inside it both (MongoDB refuses `profile` with `profile.ssn`). Plus 0.05 KB for a
// `where` applied to `?version=all` and `?version=diffs`, as Eve applies it (it was ignored).
// Plus 0.05 KB for media files served sandboxed and unsniffed (an uploaded HTML file ran its
// scripts on the API's origin). Plus 0.15 KB for on_post hooks handed everest's plain answer on
// Node without a copy of it (src/events/hook-bodies.ts): the copy and the stream written from it
// cost the server three times the answer's CPU while any on_post hook listened. Plus 0.05 KB for
// unique indexes built only where every resource over the collection keeps the field unique
// across it (one built for a sibling refused a soft-deleted document's value, which Eve allows).
// Plus 0.25 KB for the data layer telling a driver which sorted paths the schema keeps free of
// arrays and documents (src/settings/rule-types.ts): SQLite sorted those by their JSON text, and
// looking for them costs a sorted read a second pass wherever the schema does not rule them out.
// Plus 0.1 KB for `unique_within_resource` and `unique_to_user` held between concurrent writes
// (MongoDB stored 22 of 24 concurrent POSTs of one value), an on_pre hook's read of the body held
// to MAX_BODY_SIZE (it read a body of any size whole), and a body error a hook lets through
// answered 413 or 400 (it was a 500, logged as a fault). Plus 0.1 KB for a request path decoded
// before it is routed and linked, as Werkzeug decodes it (`/peo%70le` was a 404, and links
// carried the request's escapes where Eve's carry the resource's name). Plus 0.1 KB for a body
// the client abandons answered as the client's 400 on Deno, Bun and Workers (it was a 500, counted
// and logged as an unhandled error for every client that dropped mid-request). Plus 0.1 KB for
// BSON binary data another program stored served as its bytes (it was the bson class's own
// fields, `position` among them) and hashed into ETags with its subtype, as json_util does.
// Plus 0.2 KB for `$addToSet` as MongoDB applies it (src/drivers/memory/add-to-set.ts): mingo's
// made a set of the whole list, so a stored duplicate was dropped and the write lost on the
// embedded store and SQLite, and MongoDB's versions and oplog recorded that result. Plus 0.2 KB
// for a soft delete and a PATCH merging a sub-document that send the store only what they change
// (src/methods/merged-paths.ts): on MongoDB every value they wrote back lost its BSON type, an
// Int64 or a double holding a whole number becoming an int32. Plus 0.1 KB for a restore by update
// operators or by filter checked for the unique values another document took meanwhile, as an
// item PATCH's restore is (they brought back two live documents with one unique value). Plus
// 0.8 KB for settings that started and then went wrong at request time refused at start-up (src/settings/consistency.ts):
// two resources at one url (every request went to the first), meta, envelope or query parameter
// names alike (one overwrote the other in every document, response or request), and url segments
// other than the named regex (served as literal text). Plus 0.2 KB for a datasource filter's
// operators checked at start-up by the reading a `where` gets (an unknown one or `$where` made
// every read of the endpoint a 400 blaming the client), and Eve's None and "MONGO" defaults of
// datasource keys and mongo_prefix taken as absent (they were refused). Plus 0.3 KB for an empty
// RENDERERS, a data_relation `field` the referenced schema lacks and a numeric field's `min` or
// `max` no number converts from refused at start-up: the first answered in a format nobody
// enabled, the second failed every write, the third was never enforced. Plus 0.1 KB for D1's
// limits answered (src/drivers/sqlite/port.ts): a value past 2 MB the client's 413, a filter
// past 100 KB of SQL read by a scan; both were 500s. Plus 0.2 KB for the filter operators' one
// home moved down to src/util/operators.ts, where both the settings' check and `where` read it
// (the settings had imported the query layer above them; the entry's chunks split anew). Plus
// 0.05 KB for `$polygon` and a query's `$comment` let through (valid filters were refused). Plus
// 0.05 KB for a restore's check of unique values inside sub-documents (they came back duplicated).
// Plus 0.2 KB for what a proxy and a cache needed: Location's id escaped (`?`, `#`, `%` named
// another document), link values escaped where a followed link asked something else, Vary:
// Origin on every CORS answer, Retry-After on a 503, and abort()'s non-error statuses and async
// coercers answered 500 (a 101 hung Node's clients; a promise was stored as the value). Plus
// 0.2 KB for the memory driver's `$in` and `$nin`, whose list is hashed once per filter
// (src/drivers/memory/membership.ts): a `where` of 1,000 ids took seconds.
const TARGET_GZIP = 125.6 * 1024;

let dir: string;
let build: WorkerBuild;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "everest-bundle-test-"));
  build = await buildWorker({ settingsFile: join(ROOT, "examples/settings.json"), outfile: join(dir, "worker.js") });
}, 60_000);
afterAll(() => rm(dir, { recursive: true, force: true }));

const lazy = (source: string): WorkerModule => {
  const module = build.modules.find((m) => m.entryPoint === source);
  if (!module) throw new Error(`no module of its own for ${source}`);
  return module;
};

/** The source files bundled into these modules. */
function inputs(modules: WorkerModule[]): string[] {
  const paths = new Set(modules.map((module) => module.path));
  return Object.entries(build.result.metafile.outputs)
    .filter(([output]) => paths.has(resolve(output)))
    .flatMap(([, output]) => Object.keys(output.inputs));
}

describe("Workers bundle of the example", () => {
  it("loads drivers, the jsonschema engine, aggregation, geometry, operations and the opt-in writes as modules of their own", () => {
    const operational = ["src/metrics/service.ts", "src/endpoints/operational.ts", "src/shutdown.ts", "src/ratelimit/redis.ts"];
    for (const source of ["src/drivers/memory/index.ts", "src/drivers/data-api/index.ts", "src/validation/jsonschema.ts", "src/drivers/memory/aggregation.ts", "src/drivers/memory/turf.ts", "src/methods/opt-in-writes.ts", ...operational]) {
      expect(build.modules[0]!.imports).not.toContain(lazy(source).name);
    }
  });

  it("leaves them out of what the example loads: the entry, the memory driver and their imports", () => {
    const example = inputs(loadedWith(build.modules, build.modules[0]!, lazy("src/drivers/memory/index.ts")));
    expect(example.filter((input) => /@cfworker|@turf|mingo\/esm\/(aggregator|operators\/(expression\/date|accumulator|window))|src\/metrics\/|src\/shutdown|src\/endpoints\/operational/.test(input))).toEqual([]);
    expect(example.some((input) => input.endsWith("src/drivers/memory/driver.ts"))).toBe(true);
  });

  it(`keeps what the example loads within ${TARGET_GZIP / 1024} KB gzip`, async () => {
    const example = loadedWith(build.modules, build.modules[0]!, lazy("src/drivers/memory/index.ts"));
    const sizes = await Promise.all(example.map(async (module) => gzipSync(await readFile(module.path)).byteLength));
    expect(sizes.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(TARGET_GZIP);
  });
});
