// The JSON kept per stored version (kept-json.ts), loaded when a read first asks for it: only a
// store that shares versions (Driver.sharesVersions) ever does, so a deployment on another store,
// a Worker on D1 for one, never loads it.
import type { Config } from "../settings/normalize.ts";
import type { RenderedDocuments } from "./kept-json.ts";
import { ITEM_SEPARATOR, JsonText } from "./pyjson.ts";
import { compactJson } from "./respond.ts";

export class KeptJson {
  private kept: RenderedDocuments | Promise<RenderedDocuments> | null = null;

  constructor(private readonly config: Config) {}

  /** The kept JSON; the first call waits for its module, once. */
  get(): RenderedDocuments | Promise<RenderedDocuments> {
    if (this.kept === null) {
      const config = this.config;
      const writer = { json: (body: unknown) => compactJson(config, body), separator: ITEM_SEPARATOR, slot: new JsonText("\u0000") };
      this.kept = import("./kept-json.ts").then(({ RenderedDocuments }) => (this.kept = new RenderedDocuments(writer)));
    }
    return this.kept;
  }
}
