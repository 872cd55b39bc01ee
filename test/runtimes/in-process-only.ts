// The one list of what the conformance suite runs in-process only. A server on another runtime
// is reached over HTTP alone, so a test that needs the API inside its own process — hooks,
// loggers, drivers and other HandlerOptions, or api.handler to reach the data layer — cannot run
// there. Nothing else belongs here: a runtime that answers differently is a bug in src/.

export interface InProcessOnly {
  why: string;
  /** Tests as "describe > test"; none means the whole file (it reaches the app while it is collected). */
  tests?: string[];
}

export const IN_PROCESS_ONLY: Record<string, InProcessOnly> = {
  "test/http/feed-lifecycle.test.ts": { why: "reads the App's registry of streams and closes the App through api.handler" },
  "test/http/feed.test.ts": {
    why: "measures the stream's own bounded buffer, which a reader in this process fills at once; over a socket the kernel's buffers take megabytes first (the Node adapter waits for the socket, so they stay bounded too)",
    tests: ["change feed: operation > drops a reader that does not read once its buffer is full, with a final event"],
  },
  "test/http/foreign-documents.test.ts": { why: "stores documents as another program would (no _etag, no dates) through app.data, and changes them behind the API's back" },
  "test/http/access-log.test.ts": { why: "collects the access log lines with an accessLog function in HandlerOptions" },
  "test/http/hooks-logging.test.ts": { why: "collects log records with a logger function and raises errors from hooks" },
  "test/http/hooks.test.ts": { why: "subscribes callbacks with app.on in every test" },
  "test/http/hook-types.test.ts": { why: "records what the callbacks given in HandlerOptions are handed" },
  "test/http/liveness-opening.test.ts": { why: "registers a MongoDB driver whose opening never ends, in this process" },
  "test/http/update-hooks.test.ts": { why: "subscribes callbacks with app.on, or brings a driver that fails on purpose in HandlerOptions" },
  "test/http/unique-index.test.ts": {
    why: "compares the index's answers with those of an on_insert hook's path, a function given in HandlerOptions; shares one driver between two APIs, wraps it, collects log records and drops a collection behind the API's back",
  },
  "test/http/internal.test.ts": { why: "calls Eve's internal resource API, app.internal, which has no HTTP form" },
  "test/http/parent-children.test.ts": { why: "installs its parent/children behaviour as hooks on the app" },
  "test/http/aggregation.test.ts": { why: "both groups observe or rewrite pipelines through before/after_aggregation hooks" },
  "test/http/embedding.test.ts": { why: "counts database reads with a wrapping driver passed as options.driver" },
  "test/http/oplog.test.ts": {
    why:
      "reads stored entries through app.data and app.internal, adds to them with an on_oplog_push hook, or authenticates with a TokenAuth class in the settings; " +
      "the first expects the client address from CF-Connecting-IP, which only counts without an adapter (in-process, or behind Cloudflare's edge): a server behind node:http, Deno.serve or Bun.serve records the socket's address, as Eve does",
    tests: [
      "oplog > logs every write with its operation, endpoint, id, time and audit fields",
      "oplog > leaves internal resources and internal calls on them out, logs internal calls on public ones",
      "oplog settings > without OPLOG_AUDIT keeps no ip, user or changes",
      "oplog settings > stores what on_oplog_push adds; returns `extra` only with OPLOG_RETURN_EXTRA_FIELD",
      "oplog settings > without OPLOG_ENDPOINT the log is internal, still written",
      "oplog settings > OPLOG off: no log resource, nothing written",
      "oplog with authentication > the endpoint carries its own settings: auth on the log of a public API",
      "oplog with authentication > entries name the user, and user-restricted access shows each user their own",
    ],
  },
  "test/http/field-rules-writes.test.ts": {
    why: "stores a document as another program would (without a field every POST sets) through app.data",
    tests: ["field rules on writes > PUT and PATCH leave a field the caller may not write absent where it was, defaults notwithstanding"],
  },
  "test/http/late-versioning.test.ts": {
    why: "stores documents as they were before versioning was turned on, through app.data",
    tests: [
      "versioning over documents stored before it > shows such a document as version 1, also when asked for ?version=1",
      "versioning over documents stored before it > keeps version 1 when it is first changed, which becomes version 2",
      "versioning over documents stored before it > lets a versioned data_relation name it at version 1, and embeds it",
    ],
  },
  "test/http/embedding-levels.test.ts": {
    why: "counts the lookups of each level by watching the data layer's find",
    tests: ["embedding through an embedded document > embeds each level, for an item and for every item of a page"],
  },
  "test/http/rendered-reads.test.ts": {
    why: "subscribes on_fetched hooks with app.on once documents are kept",
    tests: ["reads kept as JSON, and hooks > run an on_fetched hook subscribed after the document was kept"],
  },
  "test/http/schema-endpoint.test.ts": { why: "its settings carry a coerce function and a TokenAuth instance, which only exist in this process" },
  "test/http/soft-delete.test.ts": {
    why: "stores documents that predate soft delete, or dangling references, through app.data",
    tests: [
      "soft delete > reads documents stored without the flag as live, and a resource can opt out",
      "soft delete > with versioning, deleting and restoring are versions; the deleted version answers 404",
    ],
  },
  "test/http/versioning.test.ts": {
    why: "counts the shadow collection and stores unversioned documents through app.data; one test installs hooks",
    tests: [
      "document versioning > removes the versions with the document, and with the collection",
      "document versioning > catches up on documents stored before versioning, and restarts numbering when the version is removed",
      "versioning settings > fires on_fetched_item for each version of `all` and on_fetched_diffs once for diffs",
    ],
  },
};

export const WHOLE_FILES = Object.keys(IN_PROCESS_ONLY).filter((file) => !IN_PROCESS_ONLY[file]!.tests);

export function isInProcessOnly(file: string, test: string): boolean {
  return IN_PROCESS_ONLY[file]?.tests?.includes(test) ?? false;
}
