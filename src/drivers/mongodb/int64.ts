// JSON numbers reach the driver as JavaScript numbers, which the mongodb package writes as int32
// when they fit and as double otherwise. pymongo, and so Eve, writes a Python int past int32 as
// int64: a whole number past int32 is sent as a Long, so a value stored by everest has the BSON
// type Eve would have given it (Eve then serves `3000000000`, not `3000000000.0`, and a
// collection validator asking for "long" accepts it). Reads decode it back to a number.
import { Long } from "bson";
import { isPlainObject } from "../../util/objects.ts";

const INT32_MAX = 2 ** 31 - 1;
const INT32_MIN = -(2 ** 31);
/** Past int64, pymongo refuses an int; everest keeps the double the number already is. */
const INT64_LIMIT = 2 ** 63;

function asLong(value: number): number | Long {
  if (!Number.isInteger(value) || (value >= INT32_MIN && value <= INT32_MAX) || Math.abs(value) >= INT64_LIMIT) return value;
  return Long.fromNumber(value);
}

/** `value` with every whole number past int32 as a Long; the caller's objects are left as they are (copied only where one changes). */
export function withInt64s<T>(value: T): T {
  if (typeof value === "number") return asLong(value) as T;
  if (Array.isArray(value)) {
    let copy: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const sent = withInt64s(item);
      if (sent !== item) (copy ??= value.slice())[i] = sent;
    }
    return (copy ?? value) as T;
  }
  if (!isPlainObject(value)) return value;
  let copy: Record<string, unknown> | null = null;
  for (const key in value) {
    const item = value[key];
    const sent = withInt64s(item);
    if (sent !== item) (copy ??= { ...value })[key] = sent;
  }
  return (copy ?? value) as T;
}
