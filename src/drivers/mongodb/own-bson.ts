// Documents as the mongodb package decodes them → documents with everest's bson classes
// (src/drivers/mongodb/driver.ts says why they differ), for what cannot be fetched raw.
import { deserialize } from "bson";
import { BSON } from "mongodb";
import type { Doc } from "../types.ts";

export function ownBson(doc: object): Doc {
  return deserialize(BSON.serialize(doc));
}

