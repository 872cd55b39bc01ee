// Documents as the mongodb package decodes them → documents with everest's bson classes
// (src/drivers/mongodb/driver.ts says why they differ), for what cannot be fetched raw.
import { deserialize } from "bson";
import { BSON } from "mongodb";
import type { Doc } from "../types.ts";

export function ownBson(doc: object): Doc {
  return deserialize(BSON.serialize(doc));
}

/** Whether two documents are the same BSON, byte for byte (field order included). */
export function sameDocument(a: Doc, b: Doc): boolean {
  return Buffer.from(BSON.serialize(a)).equals(Buffer.from(BSON.serialize(b)));
}
