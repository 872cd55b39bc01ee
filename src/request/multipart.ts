// multipart/form-data payloads (media uploads): Eve's multipart `payload()`, within the body
// size limit, the same on every runtime.
import type { RequestContext } from "../context.ts";
import type { Doc } from "../drivers/types.ts";
import { HttpError } from "../errors.ts";
import { checkJsonShape } from "../http/json-shape.ts";
import type { Config } from "../settings/normalize.ts";
import { isMediaRule } from "../settings/media-rules.ts";
import { isRefusedKey } from "../util/objects.ts";

type Entries = Iterable<[string, FormDataEntryValue]>;

/** The body's form entries, refused (413) past MAX_BODY_SIZE before it is all read. */
async function readForm(ctx: RequestContext): Promise<Entries> {
  const limit = ctx.maxBodySize;
  if (Number(ctx.request.headers.get("content-length") ?? NaN) > limit) throw new HttpError(413);
  let size = 0;
  let tooLarge = false;
  const chunks: Uint8Array[] = [];
  const contentType = ctx.request.headers.get("content-type") ?? "";
  const source = ctx.bodyText !== undefined ? new Response(ctx.bodyText).body : ctx.request.body;
  const counted = source?.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        size += chunk.byteLength;
        if (size <= limit) {
          chunks.push(chunk);
          controller.enqueue(chunk);
        } else {
          tooLarge = true;
          controller.error(new HttpError(413));
        }
      },
    }),
  );
  let form: FormData;
  try {
    form = await new Response(counted ?? null, { headers: { "Content-Type": contentType } }).formData();
  } catch (error) {
    if (tooLarge) throw new HttpError(413);
    throw new HttpError(400, "Malformed multipart/form-data", { cause: error });
  }
  // Deno's formData() takes a body cut off inside a part, and drops that part (a file not stored).
  if (!closes(chunks, boundaryOf(contentType))) throw new HttpError(400, "Malformed multipart/form-data");
  const values = [...form.values()];
  // Deno types a file part that names no type as a file of bytes, workerd leaves it untyped; RFC 7578 says text.
  const mended = values.includes("") || values.some((value) => typeof value !== "string" && (ON_BUN || value.type === OCTETS || value.type === ""));
  return mended ? fromPartHeaders(form, chunks, contentType) : form;
}

/** Bun's formData() gives each file the type its filename suggests, not the one its part sent. */
const ON_BUN = "Bun" in globalThis;
const OCTETS = "application/octet-stream";

/**
 * The form as every runtime should give it, from the parts' own headers: workerd gives a file
 * part with an empty filename — what a browser sends for a file input left empty — as the
 * string "" (cloudflare/workerd#875), which becomes the empty File the others give; and Bun
 * types a file by its name (`a.bin` octet-stream whatever the client said), which gets the
 * Content-Type its part sent back; a file part that sends none is `text/plain` (RFC 7578), as
 * undici gives it on Node.
 */
async function fromPartHeaders(form: FormData, chunks: Uint8Array[], contentType: string): Promise<Entries> {
  const bytes = new Uint8Array(await new Blob(chunks as BlobPart[]).arrayBuffer());
  const parts = partHeads(bytes, encoder.encode(`--${boundaryOf(contentType)}`)).map((head) => {
    const disposition = /^content-disposition:(.*)$/im.exec(head)?.[1] ?? "";
    const type = /^content-type:\s*(.*?)\s*$/im.exec(head)?.[1];
    const file = /;\s*filename\*?=/i.test(disposition);
    return { name: /;\s*name="([^"]*)"/i.exec(disposition)?.[1], file, type: file ? (type ?? "text/plain") : type };
  });
  const fixed: Array<[string, FormDataEntryValue]> = [];
  let at = 0;
  for (const [key, value] of form) {
    while (at < parts.length && parts[at]!.name !== key) at++;
    const part = parts[at++];
    // The type is set on the File itself: a File made anew, or added to a FormData, is typed again by Bun.
    if (typeof value !== "string" && part?.type !== undefined && value.type !== part.type) Object.defineProperty(value, "type", { value: part.type });
    fixed.push([key, value === "" && part?.file ? new File([], "") : value]);
  }
  return fixed;
}

const encoder = new TextEncoder();
const BLANK_LINE = encoder.encode("\r\n\r\n");

function boundaryOf(contentType: string): string {
  const found = /;\s*boundary=(?:"([^"]*)"|([^;\s]*))/i.exec(contentType);
  return found?.[1] ?? found?.[2] ?? "";
}

/** Bytes after the close delimiter (an epilogue, RFC 2046) it is looked for past: clients send none. */
const EPILOGUE = 4096;

/** Whether the body holds its close delimiter (`--boundary--`) near its end, as a whole body does. */
function closes(chunks: Uint8Array[], boundary: string): boolean {
  const close = encoder.encode(`--${boundary}--`);
  let first = chunks.length;
  let length = 0;
  while (first > 0 && length < close.length + EPILOGUE) length += chunks[--first]!.byteLength;
  const tail = new Uint8Array(length);
  for (let i = first, at = 0; i < chunks.length; at += chunks[i++]!.byteLength) tail.set(chunks[i]!, at);
  return find(tail, close, Math.max(0, length - close.length - EPILOGUE)) >= 0;
}

/** Where `pattern` first occurs in `bytes` from `from`, or -1. */
function find(bytes: Uint8Array, pattern: Uint8Array, from: number): number {
  for (let i = bytes.indexOf(pattern[0]!, from); i >= 0 && i + pattern.length <= bytes.length; i = bytes.indexOf(pattern[0]!, i + 1)) {
    let j = 1;
    while (j < pattern.length && bytes[i + j] === pattern[j]) j++;
    if (j === pattern.length) return i;
  }
  return -1;
}

/**
 * Each part's head (its text up to the first blank line), found in the bytes: the parts' contents
 * are never decoded, where decoding the whole body as text held a file twice over in memory.
 */
function partHeads(bytes: Uint8Array, delimiter: Uint8Array): string[] {
  const heads: string[] = [];
  const decoder = new TextDecoder();
  let next = find(bytes, delimiter, 0);
  while (next >= 0) {
    const start = next + delimiter.length;
    next = find(bytes, delimiter, start);
    if (next < 0) break; // the closing delimiter
    const blank = find(bytes, BLANK_LINE, start);
    heads.push(decoder.decode(bytes.subarray(start, blank >= 0 && blank < next ? blank : next)));
  }
  return heads;
}

/**
 * Eve's multipart `payload()`: form fields (JSON-decoded with MULTIPART_FORM_FIELDS_AS_JSON)
 * merged with the files; a repeated key keeps its first value unless AUTO_COLLAPSE_MULTI_KEYS
 * makes a list of them, and AUTO_CREATE_LISTS turns one value of a list field into a list.
 */
export async function readMultipart(ctx: RequestContext, config: Config): Promise<Doc> {
  const form = await readForm(ctx);
  const fields = new Map<string, unknown[]>();
  const files = new Map<string, unknown[]>();
  const add = (into: Map<string, unknown[]>, key: string, value: unknown) => {
    if (isRefusedKey(key)) throw new HttpError(400, `Field name '${key}' is not allowed`);
    into.set(key, [...(into.get(key) ?? []), value]);
  };
  for (const [key, value] of form) {
    if (typeof value === "string") add(fields, key, config.MULTIPART_FORM_FIELDS_AS_JSON ? jsonField(value) : value);
    // A file input left empty still sends a part, with no name and no content. Bun gives that
    // part's File an undefined name rather than "", so a missing name counts as empty too.
    else if (value.name || value.size > 0) add(files, key, value);
  }
  if (fields.size === 0 && files.size === 0) throw new HttpError(400, "No multipart/form-data supplied");
  // Files are stored for a resource's top-level media fields only (as Eve's store_media_files
  // reads them); anywhere else one would be kept as `{}` and the upload lost behind a 201.
  for (const key of files.keys()) {
    if (!isMediaRule(ctx.resource?.schema[key])) {
      throw new HttpError(422, `'${key}' is not a media field: files are stored in a resource's top-level media fields only`);
    }
  }

  const document: Doc = {};
  for (const key of new Set([...fields.keys(), ...files.keys()])) {
    const values = [...(fields.get(key) ?? []), ...(files.get(key) ?? [])];
    document[key] = config.AUTO_COLLAPSE_MULTI_KEYS && values.length > 1 ? values : values[0];
  }
  // Held to a JSON body's checks, JSON-encoded fields included; its dotted keys nest as a body's do.
  checkJsonShape(document, config.MAX_JSON_DEPTH);
  if (config.AUTO_CREATE_LISTS) {
    for (const [field, rules] of Object.entries(ctx.resource?.schema ?? {})) {
      if (rules?.type === "list" && field in document && !Array.isArray(document[field])) document[field] = [document[field]];
    }
  }
  return document;
}

/**
 * A JSON-encoded form value; text that is not JSON stays the string it is (Eve quotes it). Its
 * shape is checked with the whole document's (readMultipart).
 */
function jsonField(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
