// Settings the OpenAPI tests describe: every example, the shared test settings, and one domain
// that uses every feature the document has to express (and some it can only describe loosely).
import { readdirSync, readFileSync } from "node:fs";
import { BasicAuth, HMACAuth, TokenAuth } from "../../src/auth/auth.ts";
import type { Settings } from "../../src/settings/types.ts";
import { Auth } from "../../src/auth/auth.ts";
import { peopleSettings } from "../support/settings.ts";
import multiTenant from "../../examples/multi-tenant/settings.ts";
import parentChildren from "../../examples/parent-children/settings.ts";
import { settings as mounted } from "../../examples/mounting/settings.ts";

class DoorCheck extends Auth {
  async authorized(): Promise<boolean> {
    return true;
  }
}

/** Every feature at once: prefixes, sub-resources, lookups, media, geo, auth of every kind, … */
export function everything(): Settings {
  return {
    URL_PREFIX: "api",
    API_VERSION: "v2",
    SCHEMA_ENDPOINT: "schema",
    JSONP_ARGUMENT: "callback",
    RATE_LIMIT_POST: [100, 60],
    AUTH: BasicAuth,
    PUBLIC_METHODS: ["GET"],
    RESOURCE_METHODS: ["GET", "POST", "DELETE"],
    ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
    EXTENDED_MEDIA_INFO: ["content_type", "name", "length"],
    DOMAIN: {
      people: {
        description: "The people who write and own works.",
        additional_lookup: { url: 'regex("[\\w]+")', field: "lastname" },
        allowed_write_roles: ["editor"],
        schema: {
          firstname: { type: "string", minlength: 1, maxlength: 10, description: "Given name" },
          lastname: { type: "string", required: true, unique: true, empty: false },
          role: { type: "list", allowed: ["author", "contributor"] },
          location: { type: "dict", schema: { address: { type: "string" }, city: { type: "string", required: true } } },
          born: { type: "datetime", nullable: true },
          age: { type: "integer", min: 0, max: 150, default: 0 },
          code: { type: "string", readonly: true, regex: "[A-Z]{3}" },
          tags: { type: "list", schema: { type: "string", maxlength: 20 } },
          home: { type: "point" },
          area: { type: "polygon" },
          trips: { type: "featurecollection" },
          shapes: { type: "geometrycollection" },
          favourite: { type: "feature" },
          score: { type: "number", coerce: "to_float" },
          badge: { type: "string", is_badge: true },
          special: { type: "special_thing" },
          picture: { type: "media" },
        },
      },
      works: {
        authentication: TokenAuth,
        public_methods: [],
        public_item_methods: ["GET"],
        embedded_fields: [],
        schema: {
          title: { type: "string", required: true },
          owner: { type: "objectid", required: true, data_relation: { resource: "people", embeddable: true } },
          editors: { type: "list", schema: { type: "objectid", data_relation: { resource: "people", embeddable: true } } },
        },
      },
      notes: {
        authentication: new HMACAuth({ secrets: { app: { secret: "s" } } }),
        soft_delete: true,
        versioning: true,
        enforce_if_match: false,
        bulk_enabled: false,
        schema: { text: { type: "string" } },
      },
      replies: {
        url: 'notes/<regex("[a-f0-9]{24}"):note>/replies',
        authentication: DoorCheck,
        public_methods: [],
        item_lookup: false,
        schema: { note: { type: "objectid" }, text: { type: "string" } },
      },
      totals: {
        datasource: { source: "works", aggregation: { pipeline: [{ $match: { owner: "$owner" } }, { $group: { _id: "$owner", count: { $sum: 1 } } }] } },
      },
      secrets: { internal_resource: true, schema: { value: { type: "string" } } },
    },
  };
}

/** Update operators, and PATCH and DELETE by filter (docs/updates.md). */
export function operatorsAndFilters(): Settings {
  return {
    UPDATE_OPERATORS: ["$set", "$unset", "$inc", "$mul", "$min", "$max", "$push", "$pull", "$addToSet", "$currentDate"],
    PATCH_BY_FILTER: true,
    DELETE_BY_FILTER: true,
    BY_FILTER_MAX_AFFECTED: 500,
    RESOURCE_METHODS: ["GET", "POST", "PATCH", "DELETE"],
    ITEM_METHODS: ["GET", "PATCH", "DELETE"],
    DOMAIN: {
      items: {
        schema: {
          name: { type: "string", required: true },
          code: { type: "string", unique: true },
          stock: { type: "integer", min: 0 },
          price: { type: "float" },
          fixed: { type: "string", readonly: true },
          seen: { type: "datetime" },
          tags: { type: "list", maxlength: 5, schema: { type: "string" } },
          stats: { type: "dict", schema: { views: { type: "integer" }, label: { type: "string" } } },
        },
      },
      logs: { update_operators: [], patch_by_filter: false, delete_by_filter: false, resource_methods: ["GET", "DELETE"], schema: { line: { type: "string" } } },
    },
  };
}

const ROOT = new URL("../../", import.meta.url);

/** Every settings.json under examples/ and test/fixtures/, so new ones are covered as they come. */
function jsonSettings(): Record<string, () => Settings> {
  const found: Record<string, () => Settings> = {};
  for (const folder of ["examples", "test/fixtures"]) {
    for (const file of readdirSync(new URL(folder, ROOT), { recursive: true }) as string[]) {
      if (!file.endsWith("settings.json")) continue;
      const path = `${folder}/${file}`;
      found[path] = () => JSON.parse(readFileSync(new URL(path, ROOT), "utf8")) as Settings;
    }
  }
  return found;
}

export const SETTINGS: Record<string, () => Settings> = {
  ...jsonSettings(),
  "examples/multi-tenant": () => multiTenant,
  "examples/parent-children": () => parentChildren,
  "examples/mounting": () => mounted,
  "test/support/settings.ts": () => peopleSettings(),
  everything,
  operatorsAndFilters,
};
