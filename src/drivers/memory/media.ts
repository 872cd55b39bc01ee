// Media files of one database, kept whole in memory, and the MediaStore over them.
import { Binary, ObjectId } from "bson";
import type { MediaFile, MediaStore } from "../types.ts";

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

/** A media write's journal record, less the database the driver adds. */
export type MediaWrite =
  | { op: "media.put"; file: { id: string; filename?: string; contentType: string; uploadDate: Date; data: Binary } }
  | { op: "media.delete"; id: string };

/** What the store needs of the driver: its state check, the database's files, and its journalled writes. */
export interface MediaHost {
  usable(): void;
  files(create: boolean): Map<string, MediaRecord> | undefined;
  /** Journals `record`, runs `change` (the write in memory), and resolves once the record is durable. */
  write(record: MediaWrite, change: () => void): Promise<void> | undefined;
}

export function memoryMediaStore(host: MediaHost): MediaStore {
  return {
    put: async (data, meta) => {
      host.usable();
      const record: MediaRecord = {
        id: new ObjectId().toHexString(),
        contentType: meta.contentType ?? "application/octet-stream",
        uploadDate: new Date(),
        data: data instanceof Uint8Array ? new Uint8Array(data) : new Uint8Array(await data.arrayBuffer()),
        ...(meta.filename !== undefined ? { filename: meta.filename } : {}),
      };
      const committing = host.write({ op: "media.put", file: { ...record, data: new Binary(record.data) } }, () => host.files(true)!.set(record.id, record));
      if (committing) await committing;
      return record.id;
    },
    get: async (id) => {
      host.usable();
      const record = host.files(false)?.get(id);
      return record ? mediaFile(record) : null;
    },
    delete: async (id) => {
      host.usable();
      const files = host.files(false);
      if (!files?.has(id)) return;
      const committing = host.write({ op: "media.delete", id }, () => files.delete(id));
      if (committing) await committing;
    },
  };
}
