// Media files of one database, kept whole in memory.
import type { MediaFile } from "../types.ts";

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
