// OpenAPI 3.1 from the settings, and the explorer page that renders it. See docs/openapi.md.
export { buildOpenApi, openApiDocument, type OpenApiDocument, type OpenApiOptions } from "./document.ts";
export { packageFiles, type ExplorerFiles } from "./explorer.ts";
export { explorerResponse } from "./explorer-page.ts";
