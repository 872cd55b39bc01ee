// A method's Reply → a web Response: content negotiation (JSON, XML, JSONP), pretty printing,
// caching and validator headers, HEAD without a body. Eve's `_prepare_response`.
import type { RequestContext } from "../context.ts";
import { HttpError } from "../errors.ts";
import { knownResponse, type PlainHeaders } from "../http/known-body.ts";
import type { Reply } from "./reply.ts";
import type { Config } from "../settings/normalize.ts";
import { formatHttpDate } from "./http-date.ts";
import { isValidJsonpCallback, wrapJsonp } from "./jsonp.ts";
import { toJson } from "./json.ts";
import { toPlain } from "./plain.ts";

type Format = "json" | "xml";

interface Offer {
  mime: string;
  format: Format;
}

const ENCODER = new TextEncoder();
const DECODER = new TextDecoder();
const JSON_MIMES = ["application/json"];
const XML_MIMES = ["application/xml", "text/xml", "application/x-xml"];

/** RENDERERS accepts everest's names and Eve's class paths. */
export function rendererFormat(name: string): Format | null {
  const lower = name.toLowerCase();
  if (lower === "json" || lower.endsWith("jsonrenderer")) return "json";
  if (lower === "xml" || lower.endsWith("xmlrenderer")) return "xml";
  return null;
}

/** The formats RENDERERS offers, in order (start-up refuses a list of none: Eve would answer 500). */
export function compileOffers(config: Config): Offer[] {
  const offers: Offer[] = [];
  for (const name of config.RENDERERS) {
    const format = rendererFormat(name);
    for (const mime of format === "json" ? JSON_MIMES : format === "xml" ? XML_MIMES : []) {
      if (!offers.some((o) => o.mime === mime)) offers.push({ mime, format: format! });
    }
  }
  return offers;
}

interface AcceptEntry {
  type: string;
  quality: number;
  specificity: number;
}

function parseAccept(header: string): AcceptEntry[] {
  return header
    .split(",")
    .map((part) => {
      const [type, ...params] = part.trim().split(";");
      let quality = 1;
      for (const param of params) {
        const [key, value] = param.trim().split("=");
        if (key === "q") quality = Number(value);
      }
      const mime = type!.trim().toLowerCase();
      const specificity = mime === "*/*" ? 0 : mime.endsWith("/*") ? 1 : 2;
      return { type: mime, quality: Number.isFinite(quality) ? quality : 0, specificity };
    })
    .filter((entry) => entry.type.length > 0);
}

function matches(offer: string, accepted: string): boolean {
  if (accepted === "*/*" || accepted === "*") return true;
  if (accepted.endsWith("/*")) return offer.startsWith(accepted.slice(0, -1));
  return offer === accepted;
}

/** Werkzeug's best_match: highest quality, then most specific; no Accept means the first offer. */
export function negotiate(offers: Offer[], accept: string | null): Offer | null {
  if (!accept || !accept.trim()) return offers[0] ?? null;
  let best: Offer | null = null;
  let bestQuality = -1;
  let bestSpecificity = -1;
  const entries = parseAccept(accept);
  for (const offer of offers) {
    for (const entry of entries) {
      if (entry.quality <= 0 || entry.quality < bestQuality) continue;
      if ((entry.quality > bestQuality || entry.specificity > bestSpecificity) && matches(offer.mime, entry.type)) {
        best = offer;
        bestQuality = entry.quality;
        bestSpecificity = entry.specificity;
      }
    }
  }
  return best;
}

/** Headers shared by every response of a request (cache directives, CORS, rate limits …). */
function baseHeaders(config: Config, ctx: RequestContext): PlainHeaders {
  const headers: PlainHeaders = { ...ctx.responseHeaders };
  if (ctx.method === "GET" || ctx.method === "HEAD") {
    const resource = ctx.resource;
    const cacheControl = resource ? resource.cache_control : config.CACHE_CONTROL;
    const expires = resource ? resource.cache_expires : config.CACHE_EXPIRES;
    if (cacheControl) headers["cache-control"] = cacheControl;
    if (expires) headers.expires = formatHttpDate(new Date(Date.now() + expires * 1000));
  }
  return headers;
}

/** What rendering needs of the settings, compiled once. */
export interface Rendering {
  config: Config;
  offers: Offer[];
}

export function compileRendering(config: Config): Rendering {
  return { config, offers: compileOffers(config) };
}

/** The format the client prefers; nothing acceptable (a browser's text/html): the first, as Eve's _best_mime falls back. */
function offerFor(offers: Offer[], ctx: RequestContext): Offer {
  return negotiate(offers, ctx.request.headers.get("accept")) ?? offers[0]!;
}

/** Eve indents GET answers only (eve/render.py render_json); a write's or a HEAD's stays compact. */
function pretty(ctx: RequestContext): boolean {
  return ctx.method === "GET" && ctx.arg("pretty") !== null;
}

/** Whether the answer to this request will be JSON, not indented (CallScope.compactJson). */
export function answersCompactJson({ offers }: Rendering, ctx: RequestContext): boolean {
  return offerFor(offers, ctx).format === "json" && !pretty(ctx);
}

/** A body as JSON without `?pretty`, as renderReply writes it. */
export function compactJson(config: Config, body: unknown): string {
  return toJson(body, false, config.DATE_FORMAT, config.JSON_SORT_KEYS);
}

/**
 * The Response of a reply, in the format the client prefers. XML comes from a module imported
 * on first use (most clients ask for JSON, and a Worker's bundle then loads it apart), so only
 * an XML answer is a promise.
 */
export function renderReply({ config, offers }: Rendering, ctx: RequestContext, reply: Reply): Response | Promise<Response> {
  if (reply.raw) {
    for (const key in ctx.responseHeaders) reply.raw.headers.set(key, ctx.responseHeaders[key]!);
    return reply.raw;
  }
  const headers = baseHeaders(config, ctx);
  if (reply.etag) headers.etag = `"${reply.etag}"`;
  if (reply.lastModified) headers["last-modified"] = formatHttpDate(reply.lastModified);
  if (reply.headers) {
    for (const key in reply.headers) {
      const name = key.toLowerCase();
      // A reply's Vary adds to what the request's handling set (CORS's Origin).
      headers[name] = name === "vary" && headers.vary ? `${headers.vary}, ${reply.headers[key]}` : reply.headers[key]!;
    }
  }
  if (reply.status === 304) return knownResponse(ctx.request, null, 304, headers);

  const offer = offerFor(offers, ctx);
  // Werkzeug, which sets Eve's types, adds a charset to text/* and application/xml, not to application/x-xml.
  headers["content-type"] = offer.format === "xml" && offer.mime !== "application/x-xml" ? `${offer.mime}; charset=utf-8` : offer.mime;
  if ((reply.body === null && reply.json === undefined) || reply.status === 204) return knownResponse(ctx.request, null, reply.status, headers);

  if (offer.format === "xml") {
    const body = reply.body;
    return import("./xml.ts").then(({ renderXml }) => sized(ctx, reply.status, headers, ENCODER.encode(renderXml(toPlain(body, config.DATE_FORMAT) as Record<string, unknown>, config))));
  }
  const argument = config.JSONP_ARGUMENT;
  const callback = argument ? ctx.arg(argument) : null;
  // An invalid name was refused before dispatch (App.fetch); here it only means "no JSONP".
  const jsonp = callback !== null && isValidJsonpCallback(callback) ? callback : null;
  // Bytes written before, as they are; in the rare JSONP answer, as the text they are.
  if (reply.json) return sized(ctx, reply.status, headers, jsonp === null ? reply.json : wrapJsonp(jsonp, DECODER.decode(reply.json)), jsonp === null ? reply.text : undefined);
  const text = toJson(reply.body, pretty(ctx), config.DATE_FORMAT, config.JSON_SORT_KEYS);
  // json.dumps (ensure_ascii) writes ASCII only, and a JSONP callback name is ASCII too: the
  // text's length is its length in bytes, and the runtime encodes it as it writes it.
  return sized(ctx, reply.status, headers, jsonp === null ? text : wrapJsonp(jsonp, text));
}

/** Content-Length as Eve sends it (HEAD included), not chunked. A string body must be ASCII. */
function sized(ctx: RequestContext, status: number, headers: PlainHeaders, body: string | Uint8Array<ArrayBuffer>, text?: () => string): Response {
  headers["content-length"] = String(typeof body === "string" ? body.length : body.byteLength);
  return ctx.method === "HEAD" ? knownResponse(ctx.request, null, status, headers) : knownResponse(ctx.request, body, status, headers, text);
}

/** The error envelope of docs/decisions.md §3, or the body the error carries. */
export function errorReply(config: Config, error: HttpError): Reply {
  const body = error.body ?? { [config.STATUS]: config.STATUS_ERR, [config.ERROR]: { code: error.status, message: error.message } };
  return { status: error.status, body, headers: error.headers };
}
