// Settings of test/http/field-rules-updates.test.ts's cases of operators on stored values, in a module of
// their own: they hold an auth class, which a server on another runtime loads from here.
import { BasicAuth } from "../../../src/auth/auth.ts";
import type { Settings } from "../../../src/settings/types.ts";

const users = { hr: { password: "pw", roles: ["hr"] }, dev: { password: "pw", roles: ["dev"] } };

const settings: Settings = {
  AUTH: new BasicAuth({ users }),
  ENFORCE_IF_MATCH: false,
  UPDATE_OPERATORS: ["$pull", "$addToSet", "$inc", "$mul", "$min", "$max", "$push", "$set"],
  PATCH_BY_FILTER: true,
  RESOURCE_METHODS: ["GET", "POST", "PATCH"],
  ITEM_METHODS: ["GET", "PATCH"],
  DOMAIN: {
    cards: {
      schema: {
        name: { type: "string" },
        // Anyone may write a badge's cost; only hr may read it.
        badges: { type: "list", schema: { type: "dict", schema: { label: { type: "string" }, cost: { type: "integer", allowed_read_roles: ["hr"] } } } },
        tags: { type: "list", schema: { type: "string" } },
        // Anyone may write these; only hr may read them.
        credit: { type: "integer", min: 0, allowed_read_roles: ["hr"] },
        slots: { type: "list", maxlength: 3, allowed_read_roles: ["hr"], schema: { type: "string" } },
      },
    },
    // Another resource over the same collection, without rules of its own.
    names: { datasource: { source: "cards" }, schema: { name: { type: "string" } } },
    // One that declares a field the other rules: its author serves it.
    credits: { datasource: { source: "cards" }, schema: { name: { type: "string" }, credit: { type: "integer" } } },
  },
};

export default settings;
