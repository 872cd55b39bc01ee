// The hand-written equivalent: what a developer would write instead of everest for the bench's
// `people` API, with Hono, mingo and bson. Same routes, queries and response shapes (Eve's
// envelope, links, meta fields, ETags, RFC 1123 dates), the If-Match check, and the schema of
// bench/lib/people.ts checked by the plainest code that does it (types, lengths, allowed values,
// a parseable date, no unknown fields, a required unique `lastname`): what a developer would not
// leave out of an API that stores what clients send, and far less than everest's validator does.
// Maps by `_id` and `lastname` stand in for the indexes such a developer would keep, and an
// unfiltered page is a slice of the insertion-ordered array, so the comparison is not against a
// straw man that scans.
import { createHash } from "node:crypto";
import { ObjectId } from "bson";
import { Hono, type Context } from "hono";
import { Query } from "mingo";

type Doc = Record<string, unknown>;

const PAGE_DEFAULT = 25;
const PAGE_LIMIT = 50;

/** Dates as RFC 1123, ObjectIds through their own toJSON (hex). */
function replacer(this: Record<string, unknown>, key: string, value: unknown): unknown {
  const raw = this[key];
  return raw instanceof Date ? raw.toUTCString() : value;
}

function json(c: Context, body: unknown, status: 200 | 201 | 400 | 404 | 412 | 422 | 428 = 200, headers: Record<string, string> = {}): Response {
  return c.body(JSON.stringify(body, replacer), status, { "Content-Type": "application/json", ...headers });
}

function etag(doc: Doc): string {
  return createHash("sha1").update(JSON.stringify(doc, replacer)).digest("hex");
}

const ROLES = new Set(["author", "contributor", "copy"]);
const isString = (value: unknown, max = Infinity): value is string => typeof value === "string" && value.length >= 1 && value.length <= max;

/**
 * The people schema's rules for the fields a document holds (a PATCH's changes or a new
 * document): the first broken one's message by field, or null. `born` comes as RFC 1123 text.
 */
function invalid(doc: Doc): Record<string, string> | null {
  for (const key in doc) {
    const value = doc[key];
    let ok: boolean;
    switch (key) {
      case "firstname":
        ok = isString(value, 10);
        break;
      case "lastname":
        ok = isString(value, 15);
        break;
      case "role":
        ok = Array.isArray(value) && value.every((role) => ROLES.has(role as string));
        break;
      case "location":
        ok = typeof value === "object" && value !== null && !Array.isArray(value) &&
          Object.entries(value).every(([name, part]) => (name === "address" || name === "city") && typeof part === "string");
        break;
      case "born":
        ok = typeof value === "string" && !Number.isNaN(Date.parse(value));
        break;
      case "team":
        ok = Number.isInteger(value);
        break;
      default:
        return { [key]: "unknown field" };
    }
    if (!ok) return { [key]: "invalid value" };
  }
  return null;
}

const isDoc = (value: unknown): value is Doc => typeof value === "object" && value !== null && !Array.isArray(value);

function now(): Date {
  return new Date(Math.floor(Date.now() / 1000) * 1000);
}

const selfLink = (id: unknown) => ({ self: { title: "person", href: `people/${String(id)}` } });
const meta = (doc: Doc) => ({
  _updated: doc._updated,
  _created: doc._created,
  _etag: doc._etag,
  _id: doc._id,
  _links: selfLink(doc._id),
  _status: "OK",
});

export function handWritten(): Hono {
  const docs: Doc[] = [];
  const byId = new Map<string, Doc>();
  const byLastname = new Map<string, Doc>();
  const app = new Hono();

  app.get("/people", (c) => {
    let where: Doc = {};
    try {
      where = JSON.parse(c.req.query("where") ?? "{}");
    } catch {
      return json(c, { _status: "ERR", _error: { code: 400, message: "bad where" } }, 400);
    }
    const page = Math.max(1, Number(c.req.query("page") ?? 1) || 1);
    const size = Math.min(PAGE_LIMIT, Math.max(1, Number(c.req.query("max_results") ?? PAGE_DEFAULT) || PAGE_DEFAULT));
    const empty = Object.keys(where).length === 0;
    const lastname = where.lastname;
    const candidates = typeof lastname === "string" ? [byLastname.get(lastname)].filter((d): d is Doc => !!d) : docs;
    const query = new Query(where);
    // An unfiltered page is a slice: mingo's find().skip().limit() walks the whole array (324 µs
    // at 10,000 documents, 2.8 ms at 100,000), which a developer would notice and avoid as they
    // avoid scanning for the unique field above.
    const start = (page - 1) * size;
    const items = empty ? docs.slice(start, start + size) : (query.find(candidates).skip(start).limit(size).all() as Doc[]);
    const total = empty ? docs.length : candidates.filter((doc) => query.test(doc)).length;
    const links: Record<string, unknown> = { parent: { title: "home", href: "/" }, self: { title: "people", href: "people" } };
    const last = Math.ceil(total / size);
    if (page < last) {
      links.next = { title: "next page", href: `people?page=${page + 1}` };
      links.last = { title: "last page", href: `people?page=${last}` };
    }
    if (page > 1) links.prev = { title: "previous page", href: `people?page=${page - 1}` };
    const body = {
      _items: items.map((doc) => ({ ...doc, _links: selfLink(doc._id) })),
      _links: links,
      _meta: { page, max_results: size, total },
    };
    // Eve's Last-Modified for a page: the latest _updated among its documents (exchange 4 of
    // test/fixtures/reference/exchanges.txt).
    let latest = 0;
    for (const doc of items) latest = Math.max(latest, (doc._updated as Date).getTime());
    const headers: Record<string, string> = { "X-Total-Count": String(total) };
    if (latest > 0) headers["Last-Modified"] = new Date(latest).toUTCString();
    return json(c, body, 200, headers);
  });

  app.get("/people/:id", (c) => {
    const doc = byId.get(c.req.param("id"));
    if (!doc) return json(c, { _status: "ERR", _error: { code: 404, message: "not found" } }, 404);
    const tag = `"${doc._etag as string}"`;
    if (c.req.header("if-none-match") === tag) return c.body(null, 304, { ETag: tag });
    const links = { ...selfLink(doc._id), parent: { title: "home", href: "/" }, collection: { title: "people", href: "people" } };
    return json(c, { ...doc, _links: links }, 200, { ETag: tag, "Last-Modified": (doc._updated as Date).toUTCString() });
  });

  app.post("/people", async (c) => {
    let payload: unknown;
    try {
      payload = await c.req.json();
    } catch {
      return json(c, { _status: "ERR", _error: { code: 400, message: "bad JSON" } }, 400);
    }
    const batch = (Array.isArray(payload) ? payload : [payload]) as unknown[];
    const taken = new Set<string>();
    for (const doc of batch) {
      if (!isDoc(doc)) return json(c, { _status: "ERR", _error: { code: 400, message: "not a document" } }, 400);
      const issues = invalid(doc);
      if (issues) return json(c, { _status: "ERR", _issues: issues }, 422);
      const lastname = doc.lastname;
      if (typeof lastname !== "string" || byLastname.has(lastname) || taken.has(lastname)) {
        return json(c, { _status: "ERR", _issues: { lastname: "required and unique" } }, 422);
      }
      taken.add(lastname);
    }
    const stamp = now();
    const created = (batch as Doc[]).map((input) => {
      // Eve's order: _updated, _created, _etag, _id (Eve hashes the document before the id is assigned).
      const doc: Doc = { ...input, _updated: stamp, _created: stamp };
      if (typeof doc.born === "string") doc.born = new Date(doc.born);
      doc._etag = etag(doc);
      doc._id = new ObjectId();
      docs.push(doc);
      byId.set(String(doc._id), doc);
      byLastname.set(doc.lastname as string, doc);
      return meta(doc);
    });
    const location = { Location: `${new URL(c.req.url).origin}/people/${String(created[0]!._id)}` };
    return Array.isArray(payload) ? json(c, { _status: "OK", _items: created }, 201, location) : json(c, created[0], 201, location);
  });

  app.patch("/people/:id", async (c) => {
    const doc = byId.get(c.req.param("id"));
    if (!doc) return json(c, { _status: "ERR", _error: { code: 404, message: "not found" } }, 404);
    const match = c.req.header("if-match")?.replace(/"/g, "");
    if (!match) return json(c, { _status: "ERR", _error: { code: 428, message: "If-Match required" } }, 428);
    if (match !== doc._etag) return json(c, { _status: "ERR", _error: { code: 412, message: "etag mismatch" } }, 412);
    let changes: unknown;
    try {
      changes = await c.req.json();
    } catch {
      return json(c, { _status: "ERR", _error: { code: 400, message: "bad JSON" } }, 400);
    }
    if (!isDoc(changes)) return json(c, { _status: "ERR", _error: { code: 400, message: "not a document" } }, 400);
    const issues = invalid(changes);
    if (issues) return json(c, { _status: "ERR", _issues: issues }, 422);
    if (typeof changes.born === "string") changes.born = new Date(changes.born);
    const lastname = changes.lastname;
    if (lastname !== undefined && lastname !== doc.lastname) {
      if (typeof lastname !== "string" || byLastname.has(lastname)) return json(c, { _status: "ERR", _issues: { lastname: "unique" } }, 422);
      byLastname.delete(doc.lastname as string);
      byLastname.set(lastname, doc);
    }
    const { _etag: _, ...rest } = Object.assign(doc, changes, { _updated: now() });
    doc._etag = etag(rest);
    // The new ETag in the header too, as Eve answers a PATCH (exchange 20): a client following
    // ETags reads it there.
    return json(c, meta(doc), 200, { ETag: `"${doc._etag as string}"` });
  });

  return app;
}
