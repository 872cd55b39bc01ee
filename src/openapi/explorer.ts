// The API explorer at DOCS_ENDPOINT: Swagger UI (swagger-ui-dist) rendering the OpenAPI document,
// every file served by everest itself, so the page works without internet access. Its script is
// a file too (no inline code), and Swagger UI's validator badge, which calls an outside service,
// is off. The page itself is built by explorer-page.ts, loaded when it is first asked for.

/** Reads one of the explorer's static files; null when the runtime has none (Workers). */
export type ExplorerFiles = (name: string) => Promise<Uint8Array | null>;

/**
 * The UI package's files from node_modules. The module that reads them needs node:fs, so it is
 * imported through a specifier computed at run time, which bundlers (a Worker's) leave out, as
 * src/drivers/registry.ts does for the mongodb driver: where it cannot load, there are no files.
 */
export const packageFiles: ExplorerFiles = async (name) => {
  const here = import.meta.url;
  // .ts when run from the sources (tests, tsx, Deno), .js from the package.
  const specifier = new URL(`./explorer-files${here.slice(here.lastIndexOf("."))}`, here).href;
  try {
    const module = (await import(/* @vite-ignore */ specifier)) as typeof import("./explorer-files.ts");
    return await module.readExplorerFile(name);
  } catch {
    return null;
  }
};
