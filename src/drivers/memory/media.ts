// Media files of one database, kept whole in memory.
import { Binary, ObjectId } from "bson";
import type { MediaFile, MediaStore } from "../types.ts";
import type { JournalRecord } from "./journal.ts";

export interface MediaRecord {
  id: string;
  filename?: string;
  contentType: string;
  uploadDate: Date;
  data: Uint8Array;
}

/** A view of a stored file whose reads copy, so callers cannot alter the stored bytes. */
export function mediaFile(record: MediaRecord): MediaFile {
  const { id, filename, contentType, uploadDate, data } = record;
  return {
    id,
    ...(filename !== undefined ? { filename } : {}),
    contentType,
    length: data.length,
    uploadDate: new Date(uploadDate.getTime()),
    read: async (range) => (range ? data.slice(range.start, range.end + 1) : data.slice()),
  };
}

/** What the media store needs of its driver: the usable check, and a write with its journal line. */
export interface MediaWrites {
  usable(): void;
  /** Encodes `record`, makes `change` and commits the line (undefined: nothing to wait for). */
  write(record: () => JournalRecord, change: () => void): Promise<void> | undefined;
}

/** `files(create)`: the database's media files, the map made when asked to create it. */
export function memoryMedia(files: (create: boolean) => Map<string, MediaRecord> | undefined, db: string, driver: MediaWrites): MediaStore {
  return {
    put: async (data, meta) => {
      driver.usable();
      const record: MediaRecord = {
        id: new ObjectId().toHexString(),
        contentType: meta.contentType ?? "application/octet-stream",
        uploadDate: new Date(),
        data: data instanceof Uint8Array ? new Uint8Array(data) : new Uint8Array(await data.arrayBuffer()),
        ...(meta.filename !== undefined ? { filename: meta.filename } : {}),
      };
      const committing = driver.write(
        () => ({ op: "media.put", db, file: { ...record, data: new Binary(record.data) } }),
        () => files(true)!.set(record.id, record),
      );
      if (committing) await committing;
      return record.id;
    },
    get: async (id) => {
      driver.usable();
      const record = files(false)?.get(id);
      return record ? mediaFile(record) : null;
    },
    delete: async (id) => {
      driver.usable();
      const media = files(false);
      if (!media?.has(id)) return;
      const committing = driver.write(() => ({ op: "media.delete", db, id }), () => media.delete(id));
      if (committing) await committing;
    },
  };
}
