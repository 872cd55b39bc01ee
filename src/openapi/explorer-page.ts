// The explorer's page, its starter script and the UI package's files as responses; a module of
// its own so that an API that never shows the explorer (a Worker's bundle) does not load it.
import type { Config } from "../settings/normalize.ts";
import type { ExplorerFiles } from "./explorer.ts";

/** The files the page loads from the UI package, and their types; nothing else is served. */
const PACKAGE_FILES: Record<string, string> = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "favicon-32x32.png": "image/png",
};

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(base: string, title: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="icon" type="image/png" href="${base}/favicon-32x32.png">
<link rel="stylesheet" href="${base}/swagger-ui.css">
</head>
<body>
<div id="explorer"></div>
<script src="${base}/swagger-ui-bundle.js"></script>
<script src="${base}/explorer.js"></script>
</body>
</html>
`;
}

function starter(documentUrl: string): string {
  const options = { url: documentUrl, dom_id: "#explorer", deepLinking: true, validatorUrl: null, tryItOutEnabled: true, displayRequestDuration: true };
  return `window.ui = SwaggerUIBundle(${JSON.stringify(options)});\n`;
}

const cache = new WeakMap<ExplorerFiles, Map<string, Uint8Array>>();

/**
 * The page (asset undefined), its starter script, or a file of the UI package. Null when there
 * is no such file, or when the runtime cannot read the package's files.
 */
export async function explorerResponse(config: Config, asset: string | undefined, files: ExplorerFiles): Promise<Response | null> {
  const base = `${config.basePath}/${config.docsPath}`;
  const headers = { "Cache-Control": "public, max-age=3600" };
  if (asset === undefined) {
    return new Response(page(base, "API explorer"), { headers: { ...headers, "Content-Type": "text/html; charset=utf-8" } });
  }
  if (asset === "explorer.js") {
    return new Response(starter(`${config.basePath}/${config.openApiPath}`), { headers: { ...headers, "Content-Type": "text/javascript; charset=utf-8" } });
  }
  const type = Object.hasOwn(PACKAGE_FILES, asset) ? PACKAGE_FILES[asset] : undefined;
  if (!type) return null;
  let cached = cache.get(files);
  if (!cached) cache.set(files, (cached = new Map()));
  let bytes = cached.get(asset);
  if (!bytes) {
    const read = await files(asset);
    if (!read) return null;
    cached.set(asset, (bytes = read));
  }
  return new Response(bytes as Uint8Array<ArrayBuffer>, { headers: { ...headers, "Content-Type": type, "Content-Length": String(bytes.byteLength) } });
}
