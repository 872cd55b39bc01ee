// The settings the HTTP tests of update operators and writes by filter share (docs/updates.md):
// $inc, $set and $push allowed, PATCH and DELETE by filter on, PATCH a collection method.
import type { Settings } from "../../src/settings/types.ts";

export const OPT_IN_WRITES = {
  UPDATE_OPERATORS: ["$inc", "$set", "$push"],
  PATCH_BY_FILTER: true,
  DELETE_BY_FILTER: true,
  RESOURCE_METHODS: ["GET", "POST", "PATCH", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "DELETE"],
} satisfies Settings;
