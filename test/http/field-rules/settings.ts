// The API of the field-rule scenario (test/http/field-rules*.test.ts): accounts with different
// roles over resources whose fields have read and write rules at every depth — a dict's field, a
// list's items' field, a field_access hook that lets employees read their own review — and every
// way a document is read: items, pages, embedded documents of another resource, versions and
// diffs, the oplog's changes, aggregations, media files. A module rather than JSON: the auth
// class and the hook are code (test/support/api.ts moduleSettings serves it on each runtime).
import { BasicAuth, type FieldAccessRequest, type Schema, type Settings } from "../../../src/index.ts";

export const SECRET = "zq-secret";

/** hana is in HR (reads and writes everything), sam and kim are staff, kim also an auditor. */
export const ACCOUNTS = {
  hana: { password: "hana-pw", roles: ["hr"] },
  sam: { password: "sam-pw", roles: ["staff"] },
  kim: { password: "kim-pw", roles: ["staff", "auditor"] },
};

export type Account = keyof typeof ACCOUNTS;

export function login(account: Account): Record<string, string> {
  return { Authorization: `Basic ${btoa(`${account}:${ACCOUNTS[account].password}`)}` };
}

const hr = ["hr"];

/** Employees read their own review; HR reads and writes every one. */
export function ownReview({ mode, user, document, allowed }: FieldAccessRequest): boolean {
  return allowed || (mode === "read" && document !== undefined && document.login === user);
}

export const employeeSchema: Schema = {
  name: { type: "string", required: true },
  // Who the review belongs to: only HR may change it, or anyone could make another's review theirs.
  login: { type: "string", allowed_write_roles: hr },
  salary: { type: "integer", allowed_read_roles: hr, allowed_write_roles: hr },
  review: { type: "string", allowed_read_roles: hr, allowed_write_roles: hr, field_access: ownReview },
  profile: {
    type: "dict",
    schema: { city: { type: "string" }, ssn: { type: "string", allowed_read_roles: hr, allowed_write_roles: hr } },
  },
  badges: {
    type: "list",
    schema: { type: "dict", schema: { label: { type: "string" }, cost: { type: "integer", allowed_read_roles: hr, allowed_write_roles: hr } } },
  },
  // Everyone reads it, only HR sets it: a default still applies to what others create.
  status: { type: "string", default: "active", allowed_write_roles: hr },
  // Auditors read it too: a caller's roles are all counted.
  code: { type: "string", allowed_read_roles: ["auditor", "hr"], allowed_write_roles: hr },
  // Anyone may write it, only HR read it.
  pin: { type: "string", allowed_read_roles: hr },
  manager: { type: "objectid", data_relation: { resource: "employees", embeddable: true } },
  // Cerberus' readonly beside the rules: set by its default, never by a client.
  number: { type: "integer", readonly: true, default: 7 },
};

const settings: Settings = {
  AUTH: new BasicAuth({ users: ACCOUNTS }),
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  BANDWIDTH_SAVER: false,
  ENFORCE_IF_MATCH: false,
  JSONP_ARGUMENT: "callback",
  SCHEMA_ENDPOINT: "schema",
  RETURN_MEDIA_AS_BASE64_STRING: false,
  RETURN_MEDIA_AS_URL: true,
  OPLOG: true,
  OPLOG_ENDPOINT: "oplog",
  OPLOG_CHANGE_METHODS: ["DELETE", "POST", "PATCH", "PUT"],
  DOMAIN: {
    employees: { schema: employeeSchema },
    // A pin is unique per login: a clash must not quote it to those who may not read it.
    badges: {
      schema: { login: { type: "string", required: true }, pin: { type: "string", required: true, allowed_read_roles: hr } },
      mongo_indexes: { login_pin: { key: [["login", 1], ["pin", 1]], options: { unique: true } } },
    },
    // The same documents with their history.
    records: { schema: { ...employeeSchema, manager: { type: "objectid", data_relation: { resource: "records" } } }, versioning: true },
    teams: {
      schema: {
        name: { type: "string" },
        budget: { type: "integer", allowed_read_roles: hr, allowed_write_roles: hr },
        lead: { type: "objectid", data_relation: { resource: "employees", embeddable: true } },
      },
    },
    // A pipeline a client parameterises: which field to count by.
    headcount: { datasource: { source: "employees", aggregation: { pipeline: [{ $group: { _id: "$by", count: { $sum: 1 } } }, { $sort: { _id: 1 } }] } } },
    // A pipeline that hands out stored documents as they are.
    roster: { datasource: { source: "employees", aggregation: { pipeline: [{ $match: { status: "$status" } }, { $sort: { name: 1 } }] } } },
    // Pipelines that nest whole stored documents in what they hand out.
    grouped: { datasource: { source: "employees", aggregation: { pipeline: [{ $match: { status: "$status" } }, { $group: { _id: "$status", docs: { $push: "$$ROOT" } } }] } } },
    wrapped: { datasource: { source: "employees", aggregation: { pipeline: [{ $match: { status: "$status" } }, { $replaceRoot: { newRoot: { inner: "$$ROOT" } } }] } } },
    scans: {
      schema: { title: { type: "string" }, scan: { type: "media", allowed_read_roles: hr, allowed_write_roles: hr } },
    },
  },
};

export default settings;
