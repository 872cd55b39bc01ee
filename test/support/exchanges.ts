// Reads test/fixtures/reference/exchanges.txt — real Eve 2.3.1 HTTP exchanges recorded with curl —
// into requests to replay and responses to compare.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const REFERENCE_DIR = fileURLToPath(new URL("../fixtures/reference/", import.meta.url));

export interface RecordedRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body?: string;
  /** multipart fields: [name, value, filename?] */
  form?: Array<[string, string, string?]>;
}

export interface RecordedResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface Exchange {
  number: number;
  title: string;
  request: RecordedRequest;
  response: RecordedResponse;
}

/** Splits a shell command line (single quotes, as the recordings use). */
function shellWords(line: string): string[] {
  const words: string[] = [];
  let current = "";
  let inWord = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      current += line.slice(i + 1, end);
      i = end;
      inWord = true;
    } else if (c === " ") {
      if (inWord) words.push(current);
      current = "";
      inWord = false;
    } else {
      current += c;
      inWord = true;
    }
  }
  if (inWord) words.push(current);
  return words;
}

function parseCurl(command: string, stdin: string): RecordedRequest {
  const words = shellWords(command.replace(/^\$ /, "")).slice(1);
  let method: string | undefined;
  let url: URL | undefined;
  let body: string | undefined;
  let get = false;
  const headers: Record<string, string> = {};
  const query: string[] = [];
  const form: Array<[string, string, string?]> = [];
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    if (word === "-i") continue;
    else if (word === "-X") method = words[++i];
    else if (word === "-G") get = true;
    else if (word === "-H") {
      const header = words[++i]!;
      const colon = header.indexOf(":");
      headers[header.slice(0, colon).trim()] = header.slice(colon + 1).trim();
    } else if (word === "-d") body = words[++i];
    else if (word === "--data-urlencode") {
      const pair = words[++i]!;
      const eq = pair.indexOf("=");
      query.push(`${pair.slice(0, eq)}=${encodeURIComponent(pair.slice(eq + 1))}`);
    } else if (word === "-F") {
      const field = words[++i]!;
      const eq = field.indexOf("=");
      const name = field.slice(0, eq);
      const value = field.slice(eq + 1);
      if (value.startsWith("@-")) form.push([name, stdin, /filename=([^;]+)/.exec(value)?.[1]]);
      else form.push([name, value]);
    } else url = new URL(word);
  }
  if (!url) throw new Error(`no URL in ${command}`);
  for (const part of query) url.search += (url.search ? "&" : "") + part;
  return { method: method ?? (body !== undefined || form.length ? "POST" : "GET"), url, headers, body: get ? undefined : body, form: form.length ? form : undefined };
}

export function loadExchanges(): Exchange[] {
  const text = readFileSync(REFERENCE_DIR + "exchanges.txt", "utf8");
  const blocks = text.split(/^={10,}$/m).slice(1);
  return blocks.map((block) => {
    const lines = block.replace(/^\n/, "").split("\n");
    const header = /^### (\d+)\. (.*)$/.exec(lines[0]!)!;
    const command = lines[1]!;
    const separator = lines.findIndex((l) => /^-{10,}$/.test(l));
    const statusLine = lines[separator + 1]!;
    const status = Number(statusLine.split(" ")[1]);
    const headers: Record<string, string> = {};
    let i = separator + 2;
    for (; i < lines.length && lines[i] !== ""; i++) {
      const colon = lines[i]!.indexOf(":");
      headers[lines[i]!.slice(0, colon).toLowerCase()] = lines[i]!.slice(colon + 1).trim();
    }
    const body = lines.slice(i + 1).join("\n").trim();
    // The one upload reads its file from stdin; the recorded download shows its content.
    const stdin = "hello-gridfs\n";
    return { number: Number(header[1]), title: header[2]!, request: parseCurl(command, stdin), response: { status, headers, body } };
  });
}
