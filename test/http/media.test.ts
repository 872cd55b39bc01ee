import { afterAll, describe, expect, it } from "vitest";
import { createHandler } from "../../src/handler.ts";
import type { Settings } from "../../src/settings/types.ts";
import { json, testApi, type TestApi } from "../support/api.ts";

const BYTES = new Uint8Array([0, 1, 2, 250, 251, 252, 253, 254, 255, 10]);

const settings = (extra: Settings = {}): Settings => ({
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  ...extra,
  DOMAIN: {
    images: {
      schema: {
        name: { type: "string" },
        pic: { type: "media" },
        gallery: { type: "list", schema: { type: "media" } },
        count: { type: "integer" },
        tags: { type: "list" },
      },
    },
    hidden: { datasource: { projection: { pic: 0 } }, schema: { name: { type: "string" }, pic: { type: "media" } } },
    versioned: { versioning: true, schema: { pic: { type: "media" }, keep: { type: "media", versioned: false } } },
    albums: { schema: { cover: { type: "objectid", data_relation: { resource: "images", embeddable: true } } } },
    nested: { allow_unknown: true, schema: { d: { type: "dict", schema: { f: { type: "media" } } } } },
  },
});

type Part = [string, string | Blob, string?];

function form(parts: Part[]): FormData {
  const data = new FormData();
  for (const [name, value, filename] of parts) {
    if (typeof value === "string") data.append(name, value);
    else data.append(name, value, filename);
  }
  return data;
}

const file = (bytes: Uint8Array<ArrayBuffer> = BYTES, type = "image/png") => new Blob([bytes], { type });

function upload(api: TestApi, path: string, parts: Part[], method = "POST", headers: Record<string, string> = {}) {
  return api.fetch(path, { method, body: form(parts), headers });
}

async function created(api: TestApi, path: string, parts: Part[]) {
  const response = await upload(api, path, parts);
  expect(response.status, await response.clone().text()).toBe(201);
  return json(response);
}

function base64(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("base64");
}

/** The media id the document stores (the URL form names it). */
async function mediaPath(api: TestApi, path: string, field = "pic"): Promise<string> {
  return (await json(await api.get(path)))[field];
}

describe("media upload and base64 reads", () => {
  const api = testApi(settings());
  afterAll(() => api.close());

  it("stores an uploaded file and returns it as base64", async () => {
    const image = await created(api, "/images", [["name", "first"], ["pic", file(), "pic.png"]]);
    const body = await json(await api.get(`/images/${image._id}`));
    expect(body).toMatchObject({ name: "first", pic: base64(BYTES) });
    expect((await json(await api.get("/images")))._items[0].pic).toBe(base64(BYTES));
  });

  it("converts form strings by schema type, and refuses a string for a media field", async () => {
    const image = await created(api, "/images", [["count", "5"]]);
    expect((await json(await api.get(`/images/${image._id}`))).count).toBe(5);
    const refused = await json(await upload(api, "/images", [["pic", "not a file"]]));
    expect(refused._issues).toEqual({ pic: "must be of media type" });
  });

  it("keeps the first of repeated keys, and skips file inputs left empty", async () => {
    // As a browser sends a form whose file input was left empty (FormData would drop the filename).
    const body = [
      "--b",
      'Content-Disposition: form-data; name="name"',
      "",
      "one",
      "--b",
      'Content-Disposition: form-data; name="name"',
      "",
      "two",
      "--b",
      'Content-Disposition: form-data; name="pic"; filename=""',
      "Content-Type: application/octet-stream",
      "",
      "",
      "--b--",
      "",
    ].join("\r\n");
    const response = await api.fetch("/images", { method: "POST", headers: { "Content-Type": "multipart/form-data; boundary=b" }, body });
    expect(response.status, await response.clone().text()).toBe(201);
    const stored = await json(await api.get(`/images/${(await json(response))._id}`));
    expect(stored.name).toBe("one");
    expect(stored).not.toHaveProperty("pic");
  });

  it("answers 400 for an empty or malformed multipart body", async () => {
    expect((await upload(api, "/images", [])).status).toBe(400);
    const noBoundary = await api.fetch("/images", { method: "POST", headers: { "Content-Type": "multipart/form-data" }, body: "--x\r\n" });
    expect(noBoundary.status).toBe(400);
    const truncated = await api.fetch("/images", {
      method: "POST",
      headers: { "Content-Type": "multipart/form-data; boundary=xyz" },
      body: '--xyz\r\nContent-Disposition: form-data; name="name"\r\n\r\nvalue',
    });
    expect(truncated.status).toBe(400);
  });

  // Deno's formData() read a body cut off inside its last part as the parts before it: a 201
  // for the fields, the file dropped.
  it("answers 400, storing nothing, for a body cut off inside a file part or without its close delimiter", async () => {
    const head = '--xyz\r\nContent-Disposition: form-data; name="name"\r\n\r\ncut\r\n--xyz\r\nContent-Disposition: form-data; name="pic"; filename="p.bin"\r\nContent-Type: application/octet-stream\r\n\r\n0123456789AB';
    const send = (body: string) => api.fetch("/images", { method: "POST", headers: { "Content-Type": "multipart/form-data; boundary=xyz" }, body });
    for (const body of [head, `${head}\r\n`, `${head}\r\n--xyz\r\n`, '--xyz\r\nContent-Disposition: form-data; name="name"\r\n\r\ncut\r\n--xyz']) {
      const response = await send(body);
      expect(response.status, JSON.stringify(body.slice(-20))).toBe(400);
      expect((await json(response))._error.message).toBe("Malformed multipart/form-data");
    }
    expect((await json(await api.get(`/images?where={"name":"cut"}`)))._meta.total).toBe(0);
    expect((await send(`${head}\r\n--xyz--\r\n`)).status).toBe(201);
  });

  it("refuses a file for anything but a top-level media field (it was kept as {} behind a 201)", async () => {
    for (const key of ["d.f", "other"]) {
      const response = await upload(api, "/nested", [[key, file()]]);
      expect(response.status, key).toBe(422);
      expect((await json(response))._error.message).toBe(`'${key}' is not a media field: files are stored in a resource's top-level media fields only`);
    }
    expect((await json(await api.get("/nested")))._items).toEqual([]);
    expect((await upload(api, "/images", [["name", "x"], ["count", file()]])).status).toBe(422);
  });

  it("omits media a projection excludes, and serves a field hidden by default when asked", async () => {
    const image = await created(api, "/images", [["name", "p"], ["pic", file()]]);
    expect(await json(await api.get(`/images/${image._id}?projection={"pic":0}`))).not.toHaveProperty("pic");
    const hidden = await created(api, "/hidden", [["name", "h"], ["pic", file()]]);
    expect(await json(await api.get(`/hidden/${hidden._id}`))).not.toHaveProperty("pic");
    expect((await json(await api.get(`/hidden/${hidden._id}?projection={"pic":1}`))).pic).toBe(base64(BYTES));
  });

  it("resolves media of embedded documents", async () => {
    const image = await created(api, "/images", [["pic", file()]]);
    const album = await json(await api.post("/albums", { cover: image._id }));
    const body = await json(await api.get(`/albums/${album._id}?embedded={"cover":1}`));
    expect(body.cover.pic).toBe(base64(BYTES));
  });

  it("replaces a file with PATCH and PUT, deleting the old one", async () => {
    const urls = testApi(settings({ RETURN_MEDIA_AS_BASE64_STRING: false, RETURN_MEDIA_AS_URL: true }));
    try {
      const image = await created(urls, "/images", [["pic", file()]]);
      const first = await mediaPath(urls, `/images/${image._id}`);
      const patched = await json(await upload(urls, `/images/${image._id}`, [["pic", file(new Uint8Array([1]))]], "PATCH", { "If-Match": image._etag }));
      expect((await urls.get(first)).status).toBe(404);
      const second = await mediaPath(urls, `/images/${image._id}`);
      expect(new Uint8Array(await (await urls.get(second)).arrayBuffer())).toEqual(new Uint8Array([1]));
      await upload(urls, `/images/${image._id}`, [["name", "no file"]], "PUT", { "If-Match": patched._etag });
      expect((await urls.get(second)).status).toBe(404);
    } finally {
      await urls.close();
    }
  });
});

describe("media as URLs and the media endpoint", () => {
  const api = testApi(settings({ RETURN_MEDIA_AS_BASE64_STRING: false, RETURN_MEDIA_AS_URL: true }));
  afterAll(() => api.close());

  async function stored(): Promise<{ id: string; etag: string; url: string }> {
    const image = await created(api, "/images", [["pic", file(), "pic.png"]]);
    return { id: image._id, etag: image._etag, url: await mediaPath(api, `/images/${image._id}`) };
  }

  it("returns a URL to the media endpoint, which serves the file", async () => {
    const { url } = await stored();
    expect(url).toMatch(/^\/media\/[0-9a-f]{24}$/);
    const response = await api.get(url);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("image/png");
    expect(response.headers.get("content-length")).toBe(String(BYTES.length));
    expect(response.headers.get("accept-ranges")).toBe("bytes");
    // An uploader chooses the type: what it serves never runs scripts on the API's origin.
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    expect(response.headers.get("content-security-policy")).toBe("sandbox");
    expect(response.headers.get("last-modified")).toMatch(/GMT$/);
    expect(new Uint8Array(await response.arrayBuffer())).toEqual(BYTES);
  });

  it("keeps the Content-Type each part sent, whatever its filename says (Bun guessed it from the name)", async () => {
    for (const [type, name] of [["text/plain", "notes.bin"], ["image/png", "picture.txt"], ["application/x-custom", "data"]]) {
      const image = await created(api, "/images", [["pic", file(BYTES, type), name]]);
      const response = await api.get(await mediaPath(api, `/images/${image._id}`));
      expect(response.headers.get("content-type"), name).toBe(type);
      expect(new Uint8Array(await response.arrayBuffer())).toEqual(BYTES);
    }
    // Content that reads like a part's head is content: only the head before it is read.
    const tricky = new TextEncoder().encode("\r\n\r\nContent-Type: text/evil\r\n\r\n");
    const image = await created(api, "/images", [["pic", file(tricky, "image/png"), "a.txt"]]);
    const response = await api.get(await mediaPath(api, `/images/${image._id}`));
    expect(response.headers.get("content-type")).toBe("image/png");
    expect(new Uint8Array(await response.arrayBuffer())).toEqual(tricky);
  });

  it("serves byte ranges: 206 with Content-Range, suffixes, clamping; 416 when unsatisfiable", async () => {
    const { url } = await stored();
    const ranged = async (range: string) => {
      const response = await api.get(url, { Range: range });
      return { status: response.status, range: response.headers.get("content-range"), length: response.headers.get("content-length"), bytes: [...new Uint8Array(await response.arrayBuffer())] };
    };
    expect(await ranged("bytes=2-4")).toEqual({ status: 206, range: "bytes 2-4/10", length: "3", bytes: [2, 250, 251] });
    expect(await ranged("bytes=-2")).toEqual({ status: 206, range: "bytes 8-9/10", length: "2", bytes: [255, 10] });
    expect(await ranged("bytes=8-")).toEqual({ status: 206, range: "bytes 8-9/10", length: "2", bytes: [255, 10] });
    expect(await ranged("bytes=7-1000")).toMatchObject({ status: 206, range: "bytes 7-9/10" });
    expect(await ranged("bytes=-50")).toMatchObject({ status: 206, range: "bytes 0-9/10" });
    expect(await ranged("bytes=10-")).toMatchObject({ status: 416, range: "bytes */10" });
    expect(await ranged("bytes=-0")).toMatchObject({ status: 416, range: "bytes */10" });
  });

  it("ignores a malformed Range and sends the whole file", async () => {
    const { url } = await stored();
    for (const range of ["bytes=abc", "items=0-1", "bytes=4-2", "bytes=0-1,3-4", "bytes=-"]) {
      const response = await api.get(url, { Range: range });
      expect(response.status, range).toBe(200);
      expect(new Uint8Array(await response.arrayBuffer())).toEqual(BYTES);
    }
  });

  it("answers HEAD without a body, If-Modified-Since with 304, an unknown id with 404", async () => {
    const { url } = await stored();
    const head = await api.fetch(url, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe(String(BYTES.length));
    expect(await head.text()).toBe("");
    const since = head.headers.get("last-modified")!;
    expect((await api.get(url, { "If-Modified-Since": since })).status).toBe(304);
    expect((await api.get(url, { "If-Modified-Since": "Thu, 01 Jan 2015 00:00:00 GMT" })).status).toBe(200);
    expect((await api.get("/media/0123456789abcdef01234567")).status).toBe(404);
    expect((await api.fetch(url, { method: "DELETE" })).status).toBe(405);
  });

  it("deletes files with their document", async () => {
    const { id, etag, url } = await stored();
    expect((await api.delete(`/images/${id}`, { "If-Match": etag })).status).toBe(204);
    expect((await api.get(url)).status).toBe(404);
    const other = await stored();
    expect((await api.delete("/images")).status).toBe(204);
    expect((await api.get(other.url)).status).toBe(404);
  });

  it("keeps files older versions show, until the document is deleted", async () => {
    const image = await created(api, "/versioned", [["pic", file()]]);
    const first = await mediaPath(api, `/versioned/${image._id}`);
    const patched = await json(await upload(api, `/versioned/${image._id}`, [["pic", file(new Uint8Array([7]))]], "PATCH", { "If-Match": image._etag }));
    expect((await api.get(first)).status).toBe(200);
    expect((await json(await api.get(`/versioned/${image._id}?version=1`))).pic).toBe(first);
    const second = await mediaPath(api, `/versioned/${image._id}`);
    expect((await api.delete(`/versioned/${image._id}`, { "If-Match": patched._etag })).status).toBe(204);
    expect((await api.get(first)).status).toBe(404);
    expect((await api.get(second)).status).toBe(404);
  });

  it("deletes a versioned: false field's file when replaced: no version shows it", async () => {
    // They stayed, still served, after the document itself was deleted.
    const image = await created(api, "/versioned", [["pic", file()], ["keep", file(new Uint8Array([1]))]]);
    const url = `/versioned/${image._id}`;
    const first = (await json(await api.get(url))).keep as string;
    const patched = await json(await upload(api, url, [["keep", file(new Uint8Array([2]))]], "PATCH", { "If-Match": image._etag }));
    expect((await api.get(first)).status).toBe(404);
    const second = (await json(await api.get(url))).keep as string;
    expect((await api.get(second)).status).toBe(200);
    expect((await api.put(url, {}, { "If-Match": patched._etag })).status).toBe(200);
    expect((await api.get(second)).status).toBe(404);
  });

  it("builds URLs on MEDIA_BASE_URL, or on the API prefix", async () => {
    for (const [extra, prefix] of [
      [{ MEDIA_BASE_URL: "https://cdn.test" }, "https://cdn.test/files/"],
      [{ URL_PREFIX: "api" }, "/api/files/"],
    ] as const) {
      const other = testApi(settings({ RETURN_MEDIA_AS_BASE64_STRING: false, RETURN_MEDIA_AS_URL: true, MEDIA_ENDPOINT: "files", ...extra }));
      try {
        const base = "URL_PREFIX" in extra ? "/api" : "";
        const image = await created(other, `${base}/images`, [["pic", file()]]);
        const url: string = (await json(await other.get(`${base}/images/${image._id}`))).pic;
        expect(url.startsWith(prefix), url).toBe(true);
        if (base) expect((await other.get(url)).status).toBe(200);
      } finally {
        await other.close();
      }
    }
  });
});

describe("media settings", () => {
  it("EXTENDED_MEDIA_INFO returns the file with the attributes asked for", async () => {
    const api = testApi(settings({ EXTENDED_MEDIA_INFO: ["content_type", "name", "length"] }));
    try {
      const image = await created(api, "/images", [["pic", file(), "photo.png"]]);
      expect((await json(await api.get(`/images/${image._id}`))).pic).toEqual({ file: base64(BYTES), content_type: "image/png", name: "photo.png", length: 10 });
    } finally {
      await api.close();
    }
    expect(() => createHandler(settings({ EXTENDED_MEDIA_INFO: ["md5sum"] }))).toThrow(/EXTENDED_MEDIA_INFO.*'md5sum'/);
  });

  // Node's undici typed it text/plain, Bun by its name, Deno as bytes.
  it("types a file part that sends no Content-Type as text/plain (RFC 7578) on every runtime, and keeps one it sends", async () => {
    const api = testApi(settings({ EXTENDED_MEDIA_INFO: ["content_type"], RETURN_MEDIA_AS_BASE64_STRING: false, RETURN_MEDIA_AS_URL: true }));
    try {
      const typeStored = async (type?: string) => {
        const body = `--xyz\r\nContent-Disposition: form-data; name="pic"; filename="p.bin"\r\n${type ? `Content-Type: ${type}\r\n` : ""}\r\nabc\r\n--xyz--\r\n`;
        const response = await api.fetch("/images", { method: "POST", headers: { "Content-Type": "multipart/form-data; boundary=xyz" }, body });
        expect(response.status, await response.clone().text()).toBe(201);
        const { pic } = await json(await api.get(`/images/${(await json(response))._id}`));
        const media = await api.get(pic.file.replace(/^https?:\/\/[^/]+/, ""));
        const served = media.headers.get("content-type");
        return [pic.content_type, served];
      };
      expect(await typeStored()).toEqual(["text/plain", "text/plain"]);
      expect(await typeStored("application/octet-stream")).toEqual(["application/octet-stream", "application/octet-stream"]);
      expect(await typeStored("image/png")).toEqual(["image/png", "image/png"]);
    } finally {
      await api.close();
    }
  });

  it("MULTIPART_FORM_FIELDS_AS_JSON decodes every form field", async () => {
    const api = testApi(settings({ MULTIPART_FORM_FIELDS_AS_JSON: true }));
    try {
      const image = await created(api, "/images", [["name", '"quoted"'], ["count", "7"], ["tags", '["a","b"]']]);
      expect(await json(await api.get(`/images/${image._id}`))).toMatchObject({ name: "quoted", count: 7, tags: ["a", "b"] });
      expect((await upload(api, "/images", [["tags", '{"__proto__":{}}']])).status).toBe(400);
    } finally {
      await api.close();
    }
  });

  it("AUTO_COLLAPSE_MULTI_KEYS and AUTO_CREATE_LISTS make lists of files", async () => {
    const api = testApi(settings({ AUTO_COLLAPSE_MULTI_KEYS: true, AUTO_CREATE_LISTS: true }));
    try {
      const two = await created(api, "/images", [["gallery", file(new Uint8Array([1])), "a"], ["gallery", file(new Uint8Array([2])), "b"]]);
      expect((await json(await api.get(`/images/${two._id}`))).gallery).toEqual([base64(new Uint8Array([1])), base64(new Uint8Array([2]))]);
      const one = await created(api, "/images", [["gallery", file(new Uint8Array([3])), "c"]]);
      expect((await json(await api.get(`/images/${one._id}`))).gallery).toEqual([base64(new Uint8Array([3]))]);
    } finally {
      await api.close();
    }
  });

  it("refuses an upload larger than MAX_BODY_SIZE with 413", async () => {
    const api = testApi(settings({ MAX_BODY_SIZE: 1024 }));
    try {
      // The multipart bytes go out as a plain stream of small chunks, without Content-Length, so
      // the limit is met mid-stream. (A FormData body would do, but Node 24's fetch then rejects
      // internally when the reader is cancelled while it is still producing the next chunk.)
      const encoded = new Response(form([["pic", file(new Uint8Array(4096))]]));
      const bytes = new Uint8Array(await encoded.arrayBuffer());
      let offset = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (offset >= bytes.length) return controller.close();
          controller.enqueue(bytes.slice(offset, offset + 512));
          offset += 512;
        },
      });
      const response = await api.fetch("/images", {
        method: "POST",
        headers: { "Content-Type": encoded.headers.get("content-type")! },
        body,
        duplex: "half",
      } as RequestInit);
      expect(response.status).toBe(413);
      expect((await json(await api.get("/images")))._items).toEqual([]);
    } finally {
      await api.close();
    }
  });
});
