// The sqlite driver's port to Cloudflare D1, the SQLite of Workers. D1 runs each statement as
// its own transaction and a batch as one, which is all the driver asks of a port. Durability is
// D1's own (it acknowledges a write once it is stored); its errors carry SQLite's messages.
import { sqlError, type SqlPort, type SqlValue, type Statement } from "./port.ts";

import type { D1Database } from "./d1-binding.ts";

export { isD1Database } from "./d1-binding.ts";

/** D1 binds ArrayBuffers as BLOBs. */
function bindable(value: SqlValue): unknown {
  return value instanceof Uint8Array ? value.buffer.slice(value.byteOffset, value.byteOffset + value.byteLength) : value;
}

export function openD1(db: D1Database): SqlPort {
  const prepare = ({ sql, params }: Statement) => db.prepare(sql).bind(...params.map(bindable));
  const attempt = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      throw sqlError(error);
    }
  };
  return {
    all: (statement) => attempt(async () => (await prepare(statement).all()).results ?? []),
    run: (statement) => attempt(async () => (await prepare(statement).run()).meta?.changes ?? 0),
    batch: (statements) => attempt(async () => (await db.batch(statements.map(prepare))).map((result) => result.meta?.changes ?? 0)),
    close: async () => undefined,
  };
}
