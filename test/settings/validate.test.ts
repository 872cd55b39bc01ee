import { describe, expect, it } from "vitest";
import { SettingsError, validateSettings } from "../../src/settings/validate.ts";
import { closest, editDistance } from "../../src/settings/suggest.ts";
import type { FieldSchema, Settings } from "../../src/settings/types.ts";
import { referenceSettings } from "../query/fixture.ts";

/** The problems validateSettings reports for the reference settings after `adjust`. */
function problems(adjust: (settings: Settings) => void): string[] {
  const settings = referenceSettings();
  adjust(settings);
  try {
    validateSettings(settings);
  } catch (error) {
    expect(error).toBeInstanceOf(SettingsError);
    return (error as SettingsError).problems;
  }
  return [];
}

const people = (s: Settings) => s.DOMAIN!.people as Record<string, unknown>;

describe("validateSettings accepts", () => {
  it("the reference settings and an empty object", () => {
    expect(problems(() => {})).toEqual([]);
    expect(() => validateSettings({})).not.toThrow();
  });

  it("Eve's MONGO_* aliases, prefixed database settings and Eve settings everest ignores", () => {
    expect(
      problems((s) => {
        Object.assign(s, { MONGO_HOST: "db", MONGO_PORT: 27018, MONGO_DBNAME: "x", MONGO_QUERY_BLACKLIST: ["$where"], MONGO_QUERY_WHITELIST: ["$comment"] });
        Object.assign(s, { USERS_DB_URI: "memory", LOGS_MONGO_NAME: "logs", JSON_SORT_KEYS: true, INFO: "_info", HEADER_TOTAL_COUNT: "X-Count" });
        people(s).db_prefix = "USERS";
      }),
    ).toEqual([]);
  });

  it("the memory journal's compaction thresholds", () => {
    expect(problems((s) => Object.assign(s, { JOURNAL_COMPACTION_RATIO: 1.5, JOURNAL_COMPACTION_MIN_SIZE: 1048576 }))).toEqual([]);
  });

  it("Eve's renderer class paths and everest's names", () => {
    expect(problems((s) => (s.RENDERERS = ["eve.render.JSONRenderer", "xml"]))).toEqual([]);
  });

  it("Eve's None defaults of datasource keys and its default mongo_prefix, as written in a settings.py", () => {
    expect(problems((s) => (people(s).datasource = { filter: null, projection: null, default_sort: null }))).toEqual([]);
    expect(problems((s) => (people(s).mongo_prefix = "MONGO"))).toEqual([]);
  });

  it("every cascading global as a lower-case resource key", () => {
    expect(
      problems((s) => Object.assign(people(s), { pagination_limit: 10, cache_control: "no-cache", soft_delete: true, allowed_filters: ["lastname"] })),
    ).toEqual([]);
  });
});

describe("validateSettings refuses, naming setting, resource and closest name", () => {
  it("an unknown global", () => {
    expect(problems((s) => ((s as Record<string, unknown>).PAGINATION_LIMT = 10))).toEqual([
      "Unknown setting 'PAGINATION_LIMT' (did you mean 'PAGINATION_LIMIT'?)",
    ]);
    expect(problems((s) => ((s as Record<string, unknown>).pagination_limit = 10))).toEqual([
      "Unknown setting 'pagination_limit' (did you mean 'PAGINATION_LIMIT'?)",
    ]);
    expect(problems((s) => ((s as Record<string, unknown>).WHATEVER_THIS_IS = 1))).toEqual(["Unknown setting 'WHATEVER_THIS_IS'"]);
  });

  it("nothing in prefixed database settings, in everest's or Eve's spelling, for any prefix", () => {
    // Eve's own test settings use MONGO1_DBNAME; a prefix may also be chosen only at request time (setDbPrefix).
    expect(problems((s) => Object.assign(s, { MONGO2_DBNAME: "x", MONGO2_HOST: "h", MONGO2_PORT: 27018 }, void (people(s).mongo_prefix = "MONGO2")))).toEqual([]);
    expect(problems((s) => Object.assign(s, { MONGO1_DBNAME: "x", TENANT_A_DB_URI: "mongodb://a/", TENANT_B_MONGO_NAME: "b" }))).toEqual([]);
  });

  it("a prefixed database setting with an unusable value", () => {
    expect(problems((s) => Object.assign(s, { TENANT_A_DB_PORT: "x" }))).toEqual(["Setting 'TENANT_A_DB_PORT' must be an integer from 1 to 65535 (got \"x\")"]);
  });

  it("the pre-0.8 JSON/XML switches", () => {
    expect(problems((s) => ((s as Record<string, unknown>).XML = false))[0]).toMatch(/^Setting 'XML' was replaced by RENDERERS/);
  });

  it("an unknown resource key", () => {
    expect(problems((s) => (people(s).item_titel = "person"))).toEqual([
      "Resource 'people': unknown setting 'item_titel' (did you mean 'item_title'?)",
    ]);
    expect(problems((s) => (people(s).datasource = { projections: { a: 1 } }))).toEqual([
      "Resource 'people': unknown datasource setting 'projections' (did you mean 'projection'?)",
    ]);
  });

  it("methods Eve does not support where they are listed", () => {
    expect(problems((s) => ((s as Record<string, unknown>).RESOURCE_METHODS = ["GET", "FETCH"]))).toEqual([
      `Setting 'RESOURCE_METHODS' has unsupported method "FETCH" (supported: GET, POST, DELETE) (got ["GET","FETCH"])`,
    ]);
    expect(problems((s) => (people(s).item_methods = ["GET", "POST"]))).toEqual([
      `Resource 'people': setting 'item_methods' has unsupported method "POST" (supported: GET, PATCH, PUT, DELETE) (got ["GET","POST"])`,
    ]);
    expect(problems((s) => ((s as Record<string, unknown>).PUBLIC_METHODS = ["GTE"]))[0]).toContain(`unsupported method "GTE" (did you mean 'GET'?)`);
  });

  it("PATCH on a collection without patch_by_filter, and bad values of the update-operator and by-filter settings", () => {
    expect(problems((s) => (people(s).resource_methods = ["GET", "PATCH"]))).toEqual([
      "Resource 'people': PATCH on the collection needs patch_by_filter: it writes every document a 'where' matches (docs/updates.md)",
    ]);
    expect(problems((s) => Object.assign(people(s), { resource_methods: ["GET", "PATCH"], patch_by_filter: true }))).toEqual([]);
    // A global PATCH holds for the resources with the switch and is refused for the others.
    const global = problems((s) => Object.assign(s, { RESOURCE_METHODS: ["GET", "PATCH"], PATCH_BY_FILTER: true }, void (people(s).patch_by_filter = false)));
    expect(global).toEqual(["Resource 'people': PATCH on the collection needs patch_by_filter: it writes every document a 'where' matches (docs/updates.md)"]);
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ UPDATE_OPERATORS: ["$inc", "$where"] }, /^Setting 'UPDATE_OPERATORS' has unsupported operator "\$where"/],
      [{ UPDATE_OPERATORS: "$inc" }, /must be a list of update operators/],
      [{ PATCH_BY_FILTER: "yes" }, /^Setting 'PATCH_BY_FILTER' must be true or false/],
      [{ BY_FILTER_MAX_AFFECTED: 0 }, /^Setting 'BY_FILTER_MAX_AFFECTED' must be an integer of at least 1/],
      [{ UPDATE_OPERATORS_ENFORCE_IF_MATCH: 1 }, /must be true or false/],
    ];
    for (const [given, message] of cases) expect(problems((s) => Object.assign(s, given))).toEqual([expect.stringMatching(message)]);
    expect(problems((s) => (people(s).by_filter_max_affected = -5))).toEqual([expect.stringMatching(/^Resource 'people': setting 'by_filter_max_affected' must be an integer of at least 1/)]);
    expect(problems((s) => Object.assign(people(s), { by_filter_max_affected: null, update_operators: ["$inc"], update_operators_enforce_if_match: false }))).toEqual([]);
  });

  it("values of the wrong type or range", () => {
    const cases: Array<[string, unknown, RegExp]> = [
      ["PAGINATION_LIMIT", "a", /^Setting 'PAGINATION_LIMIT' must be an integer of at least 1 \(got "a"\)$/],
      ["PAGINATION_DEFAULT", 0, /must be an integer of at least 1/],
      ["CACHE_EXPIRES", -1, /must be a non-negative integer/],
      ["HATEOAS", "yes", /must be true or false/],
      ["VALIDATION_ERROR_STATUS", 200, /must be an integer from 400 to 599/],
      ["DB_PORT", 70000, /from 1 to 65535/],
      ["MONGO_PORT", "27017", /^Setting 'MONGO_PORT' must be an integer from 1 to 65535/],
      ["RENDERERS", "json", /must list at least one renderer/],
      // SPEC "Limits" 2: at least one renderer stays enabled.
      ["RENDERERS", [], /^Setting 'RENDERERS' must list at least one renderer/],
      ["RENDERERS", ["json", "yaml"], /unknown renderer "yaml"/],
      ["DATE_FORMAT", "%Q", /not a usable date format/],
      ["X_DOMAINS_RE", ["*"], /must be a regular expression or a list of regular expressions/],
      ["ITEM_URL", 'regex("[a-f")', /not a valid regular expression/],
      ["DB_QUERY_BLACKLIST", ["where"], /must be a list of operators/],
      ["RATE_LIMIT_GET", [300], /must be null or \[requests, seconds\]/],
      ["ID_FIELD", "", /must be a non-empty string/],
      ["ALLOWED_ROLES", "admin", /must be a list of strings/],
      ["DOMAIN", [], /^Setting 'DOMAIN' must be an object/],
      ["JOURNAL_COMPACTION_RATIO", 1, /must be a number greater than 1/],
      ["JOURNAL_COMPACTION_MIN_SIZE", "4MB", /must be a non-negative integer/],
    ];
    for (const [key, value, pattern] of cases) {
      const found = problems((s) => ((s as Record<string, unknown>)[key] = value));
      expect(found, key).toHaveLength(1);
      expect(found[0], key).toMatch(pattern);
    }
  });

  it("resource values of the wrong type", () => {
    expect(problems((s) => (people(s).pagination_limit = -5))).toEqual([
      "Resource 'people': setting 'pagination_limit' must be an integer of at least 1 (got -5)",
    ]);
    expect(problems((s) => (people(s).default_sort = [["lastname", 2]]))[0]).toMatch(/setting 'default_sort' must be/);
    expect(problems((s) => (people(s).datasource = { projection: { a: 2 } }))[0]).toMatch(/datasource 'projection' must map fields to 0 or 1/);
    expect(problems((s) => (people(s).additional_lookup = { field: "lastname" }))[0]).toMatch(/additional_lookup needs a 'url' unless its field is an integer/);
    expect(problems((s) => (people(s).additional_lookup = { field: "lastname", url: "[" }))[0]).toMatch(/setting 'additional_lookup' has a 'url' that/);
    expect(problems((s) => ((s.DOMAIN as Record<string, unknown>).ghost = "x"))).toEqual([
      `Resource 'ghost': the definition must be an object (got "x")`,
    ]);
  });

  it("a data_relation to an unknown resource, however deep", () => {
    const relation = (resource: string): FieldSchema => ({ type: "objectid", data_relation: { resource } });
    expect(problems((s) => (s.DOMAIN!.works!.schema!.owner!.data_relation = { resource: "peple" }))).toEqual([
      "Resource 'works': field 'owner': data_relation names unknown resource 'peple' (did you mean 'people'?)",
    ]);
    const nested = problems((s) => {
      const schema = s.DOMAIN!.works!.schema!;
      schema.meta = { type: "dict", schema: { by: relation("peoples") } };
      schema.refs = { type: "list", schema: relation("nobody") };
      schema.pair = { type: "list", items: [{ type: "string" }, relation("wroks")] };
    });
    expect(nested).toEqual([
      "Resource 'works': field 'meta.by': data_relation names unknown resource 'peoples' (did you mean 'people'?)",
      "Resource 'works': field 'refs': data_relation names unknown resource 'nobody'",
      "Resource 'works': field 'pair': data_relation names unknown resource 'wroks' (did you mean 'works'?)",
    ]);
    expect(problems((s) => (s.DOMAIN!.works!.schema!.owner!.data_relation = { resource: "people", embedable: true } as never))).toEqual([
      "Resource 'works': field 'owner': data_relation has unknown key 'embedable' (did you mean 'embeddable'?)",
    ]);
  });

  it("what Eve refuses at start-up: meta fields and `$`/`.` in the schema, auth_field as the id", () => {
    expect(problems((s) => (s.DOMAIN!.notes!.schema!._version = { type: "integer" }))).toEqual([
      "Resource 'notes': schema field(s) '_version' are handled automatically and cannot be defined",
    ]);
    expect(problems((s) => (s.DOMAIN!.people!.schema!.location!.schema = { "zip.code": { type: "string" } }))).toEqual([
      "Resource 'people': field 'location.zip.code' cannot contain '$' or '.'",
    ]);
    expect(problems((s) => (people(s).auth_field = "_id"))).toEqual(["Resource 'people': auth_field cannot be the id field '_id'"]);
    // A dotted owner was written as a top-level key and filtered on as a path: nobody saw their own documents.
    expect(problems((s) => (people(s).auth_field = "meta.owner"))).toEqual(["Resource 'people': auth_field 'meta.owner' must be a top-level field"]);
  });

  it("a db_prefix without database settings", () => {
    expect(problems((s) => (people(s).db_prefix = "USERS"))).toEqual([
      "Resource 'people': db_prefix 'USERS' needs a USERS_DB_URI, USERS_DB_NAME or USERS_DB_HOST setting",
    ]);
  });

  it("two routed resources at one url, given or taken from a name", () => {
    const clash = "Resources 'a' and 'b' have the same url 'x': every request would go to 'a'";
    expect(problems((s) => Object.assign(s.DOMAIN!, { a: { url: "x", schema: { n: { type: "string" } } }, b: { url: "x", schema: { m: { type: "integer" } } } }))).toEqual([clash]);
    expect(problems((s) => (s.DOMAIN!.works!.url = "/people/"))).toEqual(["Resources 'people' and 'works' have the same url 'people': every request would go to 'people'"]);
    // Urls are compared as written; an internal resource has no route.
    const sub = (pattern: string) => ({ url: `p/<regex("${pattern}"):pid>/q`, schema: {} });
    expect(problems((s) => Object.assign(s.DOMAIN!, { a: sub("[0-9]+"), b: sub("[a-z]+"), c: { url: "people", internal_resource: true } }))).toEqual([]);
  });

  it("meta and envelope field names that one object holds side by side", () => {
    expect(problems((s) => ((s as Record<string, unknown>).LINKS = "_meta"))).toEqual([
      "Settings 'META' and 'LINKS' are both '_meta': one would overwrite the other in collection responses",
    ]);
    expect(problems((s) => ((s as Record<string, unknown>).ETAG = "_id"))).toEqual([
      "Settings 'ID_FIELD' and 'ETAG' are both '_id': one would overwrite the other in stored documents and in responses",
    ]);
    expect(problems((s) => (people(s).id_field = "_updated"))).toEqual([
      "Resource 'people': settings 'id_field' and 'LAST_UPDATED' are both '_updated': one would overwrite the other in stored documents and in responses",
    ]);
    // VERSION only where versioning is on (notes); META and ERROR are in no response together.
    expect(problems((s) => Object.assign(s, { VERSION: "_v", LATEST_VERSION: "_v" }))).toEqual([
      "Settings 'VERSION' and 'LATEST_VERSION' are both '_v': one would overwrite the other in stored documents and in responses",
    ]);
    expect(problems((s) => Object.assign(s, { DELETED: "_created" }, void delete s.DOMAIN!.notes))).toEqual([]);
    expect(problems((s) => Object.assign(s, { ERROR: "_meta" }))).toEqual([]);
  });

  it("two query parameters of one name", () => {
    expect(problems((s) => Object.assign(s, { QUERY_WHERE: "q", QUERY_SORT: "q" }))).toEqual([
      "Settings 'QUERY_WHERE' and 'QUERY_SORT' are both 'q': a request could not give them different values",
    ]);
    expect(problems((s) => Object.assign(s, { JSONP_ARGUMENT: "page" }))).toEqual([
      "Settings 'QUERY_PAGE' and 'JSONP_ARGUMENT' are both 'page': a request could not give them different values",
    ]);
    // The cursor parameter is read only where cursors are on.
    expect(problems((s) => Object.assign(s, { PAGINATION_CURSOR_PARAM: "page" }))).toEqual([]);
  });

  it("a datasource filter with an operator MongoDB does not know or server-side JavaScript, not one only clients are refused", () => {
    const filter = (value: Record<string, unknown>) => problems((s) => (people(s).datasource = { filter: value }));
    expect(filter({ lastname: { $foo: 1 } })).toEqual(["Resource 'people': datasource 'filter' cannot be run: unknown operator $foo"]);
    expect(filter({ $or: [{ lastname: "a" }, { $where: "this.a" }] })).toEqual(["Resource 'people': datasource 'filter' cannot be run: operator $where is banned"]);
    // DB_QUERY_BLACKLIST refuses $regex to clients; a filter the settings give runs it.
    expect(filter({ lastname: { $regex: "^A", $options: "i" }, role: { $in: ["a"] } })).toEqual([]);
    // Operators of MongoDB's that every store runs, beyond Eve's list.
    expect(filter({ location: { $geoWithin: { $polygon: [[0, 0], [0, 1], [1, 1]] } }, $comment: "why" })).toEqual([]);
    expect(problems((s) => Object.assign(people(s), { datasource: { filter: { lastname: { $foo: 1 } } }, mongo_query_whitelist: ["$foo"] }))).toEqual([]);
  });

  it("a url segment in angle brackets other than the named regex, and a named regex that does not compile", () => {
    for (const url of ["p/<int:pid>/q", "r/<pid>/q", 't/<regex("[0-9]+")>/q']) {
      const segment = /<[^>]*>/.exec(url)![0];
      expect(problems((s) => (people(s).url = url))).toEqual([
        `Resource 'people': setting 'url' has segment '${segment}': the one form supported is <regex("…"):name> (docs/endpoints.md) (got ${JSON.stringify(url)})`,
      ]);
    }
    expect(problems((s) => (people(s).url = 'p/<regex("[0-9"):pid>/q'))).toEqual([
      expect.stringMatching(/^Resource 'people': setting 'url' has segment 'pid' whose regex is invalid: .+ \(got "p\/<regex\(\\"\[0-9\\"\):pid>\/q"\)$/),
    ]);
  });

  it("a data_relation field the referenced schema lacks", () => {
    expect(problems((s) => (s.DOMAIN!.works!.schema!.owner!.data_relation = { resource: "people", field: "lastnmae" }))).toEqual([
      "Resource 'works': field 'owner': data_relation 'field' 'lastnmae' is not a field of resource 'people' (did you mean 'lastname'?)",
    ]);
    for (const field of ["lastname", "_id", "_created", "location.city"]) {
      expect(problems((s) => (s.DOMAIN!.works!.schema!.owner!.data_relation = { resource: "people", field })), field).toEqual([]);
    }
    expect(problems((s) => Object.assign(people(s), { allow_unknown: true }, void (s.DOMAIN!.works!.schema!.owner!.data_relation = { resource: "people", field: "nick" })))).toEqual([]);
  });

  it("reports every problem at once", () => {
    const error = (() => {
      try {
        validateSettings({ PAGINATION_LIMT: 1, HATEOAS: 1, DOMAIN: { a: { urll: "x" } } } as unknown as Settings);
      } catch (e) {
        return e as SettingsError;
      }
      throw new Error("expected a SettingsError");
    })();
    expect(error.problems).toHaveLength(3);
    expect(error.message).toMatch(/^3 problems in the settings:\n- /);
  });
});

describe("closest names", () => {
  it("counts a transposition as one edit, ignoring case", () => {
    expect(editDistance("item_titel", "item_title")).toBe(1);
    expect(editDistance("Pagination_Limit", "PAGINATION_LIMIT")).toBe(0);
    expect(editDistance("abc", "")).toBe(3);
  });

  it("suggests only plausible typos", () => {
    expect(closest("SORTNG", ["SORTING", "PAGINATION"])).toBe("SORTING");
    expect(closest("XYZ", ["SORTING", "PAGINATION"])).toBeUndefined();
  });
});
