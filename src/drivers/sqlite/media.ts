// Media files in SQLite: a row per file and its bytes in BLOB chunks, so no single value nears
// the size limits of SQLite or D1 (2 MB a row), and a range read fetches only the chunks it
// covers. A file and its chunks are written in one transaction, so a failed upload leaves nothing.
import { ObjectId } from "bson";
import type { MediaFile, MediaStore } from "../types.ts";
import { SqlError, unavailable, type SqlPort, type Statement } from "./port.ts";

const CHUNK = 512 * 1024;

export const MEDIA_SCHEMA: Statement[] = [
  {
    sql: "CREATE TABLE IF NOT EXISTS _everest_media (db TEXT NOT NULL, id TEXT NOT NULL, filename TEXT, content_type TEXT NOT NULL, upload_date INTEGER NOT NULL, length INTEGER NOT NULL, PRIMARY KEY (db, id))",
    params: [],
  },
  { sql: "CREATE TABLE IF NOT EXISTS _everest_media_chunks (db TEXT NOT NULL, id TEXT NOT NULL, n INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (db, id, n))", params: [] },
];

async function port<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw error instanceof SqlError && error.failure === "unavailable" ? unavailable(error) : error;
  }
}

async function* chunksOf(data: Uint8Array | Blob): AsyncGenerator<Uint8Array> {
  for (let start = 0; start < (data instanceof Blob ? data.size : data.length); start += CHUNK) {
    yield data instanceof Blob ? new Uint8Array(await data.slice(start, start + CHUNK).arrayBuffer()) : data.slice(start, start + CHUNK);
  }
}

export function sqliteMedia(sql: SqlPort, db: string, assertUsable: () => void): MediaStore {
  return {
    async put(data, meta) {
      assertUsable();
      const id = new ObjectId().toHexString();
      const statements: Statement[] = [];
      let length = 0;
      for await (const chunk of chunksOf(data)) {
        statements.push({ sql: "INSERT INTO _everest_media_chunks (db, id, n, data) VALUES (?, ?, ?, ?)", params: [db, id, statements.length, chunk] });
        length += chunk.length;
      }
      statements.unshift({
        sql: "INSERT INTO _everest_media (db, id, filename, content_type, upload_date, length) VALUES (?, ?, ?, ?, ?, ?)",
        params: [db, id, meta.filename ?? null, meta.contentType ?? "application/octet-stream", Date.now(), length],
      });
      await port(() => sql.batch(statements));
      return id;
    },
    async get(id) {
      assertUsable();
      const [row] = await port(() => sql.all({ sql: "SELECT filename, content_type, upload_date, length FROM _everest_media WHERE db = ? AND id = ?", params: [db, id] }));
      if (!row) return null;
      const length = Number(row.length);
      const file: MediaFile = {
        id,
        ...(row.filename !== null && row.filename !== undefined ? { filename: String(row.filename) } : {}),
        contentType: String(row.content_type),
        length,
        uploadDate: new Date(Number(row.upload_date)),
        read: async (range) => {
          const start = range?.start ?? 0;
          const end = Math.min(range?.end ?? length - 1, length - 1);
          if (end < start) return new Uint8Array(0);
          const first = Math.floor(start / CHUNK);
          const rows = await port(() =>
            sql.all({ sql: "SELECT data FROM _everest_media_chunks WHERE db = ? AND id = ? AND n BETWEEN ? AND ? ORDER BY n", params: [db, id, first, Math.floor(end / CHUNK)] }),
          );
          const out = new Uint8Array(end - start + 1);
          let offset = first * CHUNK;
          for (const { data } of rows) {
            // D1 returns a BLOB as an array of byte values.
            const bytes = data instanceof Uint8Array ? data : Array.isArray(data) ? Uint8Array.from(data as number[]) : new Uint8Array(data as ArrayBuffer);
            const from = Math.max(start - offset, 0);
            const to = Math.min(bytes.length, end - offset + 1);
            if (to > from) out.set(bytes.subarray(from, to), offset + from - start);
            offset += bytes.length;
          }
          return out;
        },
      };
      return file;
    },
    async delete(id) {
      assertUsable();
      await port(() =>
        sql.batch([
          { sql: "DELETE FROM _everest_media WHERE db = ? AND id = ?", params: [db, id] },
          { sql: "DELETE FROM _everest_media_chunks WHERE db = ? AND id = ?", params: [db, id] },
        ]),
      );
    },
  };
}
