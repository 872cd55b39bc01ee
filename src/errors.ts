// Errors that carry an HTTP status. Thrown anywhere (a method, a hook, an auth check), they
// are rendered as the error envelope of docs/decisions.md §3 by the handler.

/** Werkzeug's default descriptions, which Eve sends as `_error.message`. */
export const STATUS_MESSAGES: Record<number, string> = {
  400: "The browser (or proxy) sent a request that this server could not understand.",
  401: "The server could not verify that you are authorized to access the URL requested. You either supplied the wrong credentials (e.g. a bad password), or your browser doesn't understand how to supply the credentials required.",
  403: "You don't have the permission to access the requested resource. It is either read-protected or not readable by the server.",
  404: "The requested URL was not found on the server. If you entered the URL manually please check your spelling and try again.",
  405: "The method is not allowed for the requested URL.",
  406: "The resource identified by the request is only capable of generating response entities which have content characteristics not acceptable according to the accept headers sent in the request.",
  409: "A conflict happened while processing the request. The resource might have been modified while the request was being processed.",
  410: "The requested URL is no longer available on this server and there is no forwarding address.",
  412: "The precondition on the request for the URL failed positive evaluation.",
  413: "The data value transmitted exceeds the capacity limit.",
  415: "The server does not support the media type transmitted in the request.",
  416: "The server cannot provide the requested range.",
  422: "The request was well-formed but was unable to be followed due to semantic errors.",
  428: "This request is required to be conditional; try using \"If-Match\" or \"If-Unmodified-Since\".",
  429: "This user has exceeded an allotted request count. Try again later.",
  500: "The server encountered an internal error and was unable to complete your request. Either the server is overloaded or there is an error in the application.",
  501: "The server does not support the action requested by the browser.",
  503: "The server is temporarily unable to service your request due to maintenance downtime or capacity problems. Please try again later.",
};

export class HttpError extends Error {
  readonly status: number;
  readonly headers: Record<string, string>;
  /** A complete body that replaces the standard envelope (validation failures, soft-deleted items). */
  readonly body?: Record<string, unknown>;
  constructor(status: number, message?: string, options?: { headers?: Record<string, string>; body?: Record<string, unknown>; cause?: unknown }) {
    // An HttpError is an answer (404, 412, 422 …), not a fault to debug: capturing the stack of
    // a request's depth cost 4 µs, ten times the rest of the error. What caused a 5xx is logged
    // from the original error, which keeps its stack.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      super(message ?? STATUS_MESSAGES[status] ?? `HTTP ${status}`, { cause: options?.cause });
    } finally {
      Error.stackTraceLimit = limit;
    }
    this.name = "HttpError";
    this.status = status;
    this.headers = options?.headers ?? {};
    this.body = options?.body;
  }
}

/** Statuses an error may answer with: a 1xx is no final answer, and there is none past 599. */
export function isAnswerStatus(status: number): boolean {
  return Number.isInteger(status) && status >= 200 && status <= 599;
}

/**
 * Eve's `abort(status, description)`, for hooks and auth checks. Werkzeug's abort knows error
 * statuses only: any other raises a LookupError, which Eve answers 500, and so does this.
 */
export function abort(status: number, message?: string, options?: { headers?: Record<string, string> }): never {
  if (!(Number.isInteger(status) && status >= 400 && status <= 599)) throw new Error(`abort(${status}): not an HTTP error status`);
  throw new HttpError(status, message, options);
}

/** 400 with Werkzeug's generic text, which is what Eve answers for any malformed query. */
export function badRequest(detail?: string): HttpError {
  return new HttpError(400, undefined, { cause: detail });
}

/** A request whose Host header or target makes no URL (`Host: a b`): the handler's and the Node adapter's 400. */
export const UNREADABLE_URL = "The request's Host header or target is not valid.";

/**
 * Eve's 500 as a finished response, for failures the renderer cannot answer (an error while
 * rendering an error, a broken socket around the handler): it says no more than Eve's own does.
 */
export function internalErrorResponse(): Response {
  return new Response('{"_status": "ERR", "_error": {"code": 500, "message": "Internal Server Error"}}', {
    status: 500,
    headers: { "Content-Type": "application/json" },
  });
}
