// What node's HTTP parser refuses never reaches the handler: answered here, on the socket, in
// the handler's JSON error envelope (405 with Allow, 414, 431, 408 or 400) instead of node's
// bare 400 or a reset.
import { STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import { STATUS_MESSAGES } from "../src/errors.ts";
import { toJson } from "../src/render/json.ts";

/**
 * Request line and headers together: room for a `where` with a few hundred values (node's
 * default, 16 KiB, is not), still bounded.
 */
export const MAX_HEADER_SIZE = 64 * 1024;

/** Werkzeug's descriptions, as `_error.message`, with those only the parser's refusals need. */
const MESSAGES: Record<number, string> = {
  ...STATUS_MESSAGES,
  408: "The server closed the network connection because the browser didn't finish the request within the specified time.",
  414: "The length of the requested URL exceeds the capacity limit for this server. The request cannot be processed.",
  431: "One or more header fields exceeds the maximum size.",
};

/** Methods the API can answer, for the Allow header of a method node's parser refuses. */
const KNOWN_METHODS = "DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT";

/** What a request node's parser refused gets: the status and the error envelope, as the handler would answer. */
export function parserRefusal(error: NodeJS.ErrnoException & { rawPacket?: Buffer }): { status: number; headers: Record<string, string> } {
  switch (error.code) {
    case "HPE_INVALID_METHOD":
      return { status: 405, headers: { Allow: KNOWN_METHODS } };
    case "HPE_HEADER_OVERFLOW": {
      // Node counts the request line with the headers, and hands over only the chunk where the
      // count ran over: the URL is to blame when that chunk holds the whole head and its request
      // line fills half the limit, or when the chunk is still inside the request line or ends it.
      const packet = error.rawPacket?.toString("latin1") ?? "";
      const end = packet.indexOf("\r\n");
      const line = end < 0 ? packet : packet.slice(0, end);
      const urlTooLong = /^[A-Z]+ \//.test(packet) ? line.length >= MAX_HEADER_SIZE / 2 : end < 0 || / HTTP\/\d\.\d$/.test(line);
      return { status: urlTooLong ? 414 : 431, headers: {} };
    }
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return { status: 408, headers: {} };
    default:
      return { status: 400, headers: {} };
  }
}

export function refuse(error: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Socket): void {
  if (error.code === "ECONNRESET" || !socket.writable) return void socket.destroy();
  const { status, headers } = parserRefusal(error);
  const body = toJson({ _status: "ERR", _error: { code: status, message: MESSAGES[status] } });
  const lines = [`HTTP/1.1 ${status} ${STATUS_CODES[status]}`, "Content-Type: application/json", `Content-Length: ${Buffer.byteLength(body)}`, "Connection: close"];
  for (const [key, value] of Object.entries(headers)) lines.push(`${key}: ${value}`);
  socket.end(`${lines.join("\r\n")}\r\n\r\n${body}`);
}
