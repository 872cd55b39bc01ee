// The path a request addresses, read as Werkzeug reads it before Eve routes it: the WSGI server
// decodes percent-escapes (PEP 3333's PATH_INFO), Werkzeug takes the bytes as UTF-8 with
// `errors="replace"`. So `/peo%70le` is `/people`, `%2F` is a slash, a run of escapes that is no
// UTF-8 is U+FFFD, and a `%` with no two hex digits after it stays as written.
const ESCAPES = /(?:%[0-9A-Fa-f]{2})+/g;
const UTF8 = new TextDecoder();

function decodeRun(run: string): string {
  const bytes = new Uint8Array(run.length / 3);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(run.slice(i * 3 + 1, i * 3 + 3), 16);
  return UTF8.decode(bytes);
}

export function decodePath(path: string): string {
  return path.includes("%") ? path.replace(ESCAPES, decodeRun) : path;
}
