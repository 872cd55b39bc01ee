// Settings of test/http/update-operators.test.ts's fields with descriptive rules, in a module of
// their own: field_access is a function, which a server on another runtime loads from here.
import type { Settings } from "../../../src/settings/types.ts";

const settings: Settings = {
  UPDATE_OPERATORS: ["$inc", "$mul", "$push", "$addToSet", "$pull"],
  RESOURCE_METHODS: ["GET", "POST"],
  ITEM_METHODS: ["GET", "PATCH"],
  VERSIONING: true,
  DOMAIN: {
    pages: {
      schema: {
        views: { type: "integer", versioned: false },
        refs: { type: "list", versioned: false, schema: { type: "integer" } },
        hits: { type: "integer", field_access: () => true },
        marks: { type: "list", schema: { type: "string" }, field_access: () => true },
      },
    },
  },
};

export default settings;
