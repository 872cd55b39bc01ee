// Settings shared by the HTTP tests: Eve's reference people/works domain, full CRUD.
import type { Settings } from "../../src/settings/types.ts";

export function peopleSettings(overrides: Partial<Settings> = {}): Settings {
  return {
    RESOURCE_METHODS: ["GET", "POST", "DELETE"],
    ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
    DOMAIN: {
      people: {
        item_title: "person",
        additional_lookup: { url: 'regex("[\\w]+")', field: "lastname" },
        schema: {
          firstname: { type: "string", minlength: 1, maxlength: 10 },
          lastname: { type: "string", minlength: 1, maxlength: 15, required: true, unique: true },
          role: { type: "list", allowed: ["author", "contributor", "copy"] },
          location: { type: "dict", schema: { address: { type: "string" }, city: { type: "string" } } },
          born: { type: "datetime" },
          age: { type: "integer", default: 0 },
        },
      },
      works: {
        schema: {
          title: { type: "string", required: true },
          owner: { type: "objectid", required: true, data_relation: { resource: "people", field: "_id", embeddable: true } },
        },
      },
    },
    ...overrides,
  };
}
