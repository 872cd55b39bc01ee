// `?embedded=` as Eve's `resolve_embedded_fields` reads it: a JSON object of field → 1 (embed)
// or 0 (do not embed); other values are ignored, anything but an object is a 400 with Eve's
// message.
import { HttpError } from "../errors.ts";
import { parseJsonOrUndefined } from "./common.ts";
import { isPlainObject, isRefusedKey } from "../util/objects.ts";

const UNPARSABLE = "Unable to parse `embedded` clause";

export function parseEmbedded(raw: string | null): Record<string, 0 | 1> {
  if (!raw) return {};
  const parsed = parseJsonOrUndefined(raw);
  if (!isPlainObject(parsed)) throw new HttpError(400, UNPARSABLE);
  const fields: Record<string, 0 | 1> = {};
  for (const [field, value] of Object.entries(parsed)) {
    if (isRefusedKey(field)) throw new HttpError(400, UNPARSABLE);
    // Python's `v == 1` / `v == 0` hold for True and False too.
    if (value === 1 || value === true) fields[field] = 1;
    else if (value === 0 || value === false) fields[field] = 0;
  }
  return fields;
}
