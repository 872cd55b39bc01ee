// The mongodb driver's media store: GridFS, in the bucket Eve's GridFSMediaStorage uses, so
// files Eve wrote are read as they are.
import { ObjectId } from "bson";
import { GridFSBucket, type Db } from "mongodb";
import { Readable } from "node:stream";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import { finished, pipeline } from "node:stream/promises";
import type { MediaFile, MediaStore } from "../types.ts";
import { run, translateError } from "./errors.ts";

/** GridFS's default bucket, the one Eve's GridFSMediaStorage uses. */
const BUCKET = "fs";

/** Node stream → web stream, so a download can start before the whole file is read. */
function webStream(source: Readable): ReadableStream<Uint8Array> {
  const chunks = source[Symbol.asyncIterator]() as AsyncIterator<Uint8Array>;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { value, done } = await chunks.next();
        if (done) controller.close();
        else controller.enqueue(new Uint8Array(value.buffer, value.byteOffset, value.byteLength));
      } catch (error) {
        controller.error(translateError(error));
      }
    },
    async cancel() {
      await chunks.return?.();
    },
  });
}

export function gridFsMedia(db: () => Promise<Db>): MediaStore {
  return {
    put: async (data, meta) => {
      const bucket = new GridFSBucket(await db(), { bucketName: BUCKET });
      const contentType = meta.contentType ?? "application/octet-stream";
      return run(async () => {
        const upload = bucket.openUploadStream(meta.filename ?? "", {
          metadata: { contentType, ...(meta.resource ? { resource: meta.resource } : {}) },
        });
        // pipeline, not pipe: a failing upload stream must fail the put, not leave it waiting.
        if (data instanceof Uint8Array) {
          upload.end(data);
          await finished(upload);
        } else await pipeline(Readable.fromWeb(data.stream() as NodeReadableStream), upload);
        // Eve (pymongo's gridfs) reads the type from the file document's top level, and this
        // driver's upload stream no longer writes it there: set it so Eve serves these files too.
        await (await db()).collection(`${BUCKET}.files`).updateOne({ _id: upload.id }, { $set: { contentType } });
        return upload.id.toHexString();
      });
    },
    get: async (id) => {
      if (!ObjectId.isValid(id) || id.length !== 24) return null;
      const bucket = new GridFSBucket(await db(), { bucketName: BUCKET });
      const _id = new ObjectId(id);
      const file = await run(() => bucket.find({ _id }, { limit: 1 }).next());
      if (!file) return null;
      // Files written by Eve (pymongo's gridfs) keep the type at the top level.
      const legacyType = (file as { contentType?: unknown }).contentType;
      const contentType = file.metadata?.contentType ?? (typeof legacyType === "string" ? legacyType : "application/octet-stream");
      const media: MediaFile = {
        id,
        ...(file.filename ? { filename: file.filename } : {}),
        contentType: String(contentType),
        length: file.length,
        uploadDate: file.uploadDate,
        read: (range) => webStream(bucket.openDownloadStream(_id, range ? { start: range.start, end: range.end + 1 } : {})),
      };
      return media;
    },
    delete: async (id) => {
      if (!ObjectId.isValid(id) || id.length !== 24) return;
      const handle = await db();
      const _id = new ObjectId(id);
      // The file document first: once it is gone the file is gone for readers, whatever happens to the chunks.
      await run(() => handle.collection(`${BUCKET}.files`).deleteOne({ _id }));
      await run(() => handle.collection(`${BUCKET}.chunks`).deleteMany({ files_id: _id }));
    },
  };
}
