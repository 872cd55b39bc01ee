// Start-up refuses bad settings through createHandler itself, naming the setting, the resource
// and the closest valid name — never at request time.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { NodeFileAccess } from "../../adapters/node.ts";
import { createHandler } from "../../src/handler.ts";
import type { Settings } from "../../src/settings/types.ts";

const start = (settings: Settings) => () => createHandler(settings);

describe("start-up validation", () => {
  it("refuses a file: journal without file access, saying what to pass; keeps one with NodeFileAccess", async () => {
    // Served by Deno.serve(handler) or the like, it would otherwise answer every request with a 500.
    expect(start({ DB_URI: "file:./notes.jsonl", DOMAIN: {} })).toThrow(/'file:\.\/notes\.jsonl'.*NodeFileAccess.*everest-api\/node/);
    expect(start({ LEDGER_DB_URI: "file:ledger.jsonl", DOMAIN: { ledger: { db_prefix: "LEDGER" } } })).toThrow(/'file:ledger\.jsonl'/);
    const dir = await mkdtemp(join(tmpdir(), "everest-startup-"));
    try {
      const settings: Settings = { DB_URI: `file:${join(dir, "notes.jsonl")}`, RESOURCE_METHODS: ["GET", "POST"], DOMAIN: { notes: { schema: { title: { type: "string" } } } } };
      const first = createHandler(settings, { services: { files: new NodeFileAccess() } });
      const posted = await first(new Request("http://api.test/notes", { method: "POST", headers: { "Content-Type": "application/json" }, body: '{"title": "kept"}' }));
      expect(posted.status).toBe(201);
      await first.app.close();
      const second = createHandler(settings, { services: { files: new NodeFileAccess() } });
      const page = await (await second(new Request("http://api.test/notes"))).json();
      expect(page._items.map((note: { title: string }) => note.title)).toEqual(["kept"]);
      await second.app.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("refuses an unknown global setting, suggesting the closest", () => {
    // @ts-expect-error the Settings type catches the typo at compile time too
    expect(start({ PAGINATION_LIMT: 10, DOMAIN: {} })).toThrow(/PAGINATION_LIMT.*PAGINATION_LIMIT/);
  });

  it("refuses an unknown resource setting, naming the resource", () => {
    // @ts-expect-error the Settings type catches the typo at compile time too
    expect(start({ DOMAIN: { people: { item_titel: "person" } } })).toThrow(/people.*item_titel.*item_title/);
  });

  it("refuses a bad value", () => {
    expect(start({ RESOURCE_METHODS: ["FETCH" as never], DOMAIN: {} })).toThrow(/RESOURCE_METHODS/);
    // A string would be searched as text: "application/json" would then take "json" as JSON.
    expect(start({ JSON_REQUEST_CONTENT_TYPES: "application/json" as never, DOMAIN: {} })).toThrow(/JSON_REQUEST_CONTENT_TYPES/);
  });

  it("refuses a data_relation to an unknown resource", () => {
    const settings: Settings = { DOMAIN: { people: {}, works: { schema: { owner: { type: "objectid", data_relation: { resource: "peopel" } } } } } };
    expect(start(settings)).toThrow(/peopel.*people/);
  });

  it("refuses an unknown schema rule unless the rules are transparent", () => {
    // @ts-expect-error the Settings type catches the typo at compile time too
    expect(start({ DOMAIN: { people: { schema: { name: { type: "string", maxlenght: 3 } } } } })).toThrow(/people.*name.*maxlenght.*maxlength/);
    // @ts-expect-error transparent rules are a run-time choice; the type knows only the declared ones
    expect(start({ DOMAIN: { people: { transparent_schema_rules: true, schema: { name: { type: "string", maxlenght: 3 } } } } })).not.toThrow();
  });

  it("refuses a min or max of a numeric field that no number converts from, keeps a numeric string", () => {
    const bounded = (min: unknown, type: string | string[] = "integer"): Settings => ({ DOMAIN: { people: { schema: { age: { type, min } as never } } } });
    expect(start(bounded("a"))).toThrow(/people.*age.*rule 'min' must be a number or a numeric string for a field of type 'integer', got 'a'/);
    expect(start(bounded("1.5"))).toThrow(/rule 'min' must be a number/);
    expect(start(bounded("18"))).not.toThrow();
    expect(start(bounded("1.5", "number"))).not.toThrow();
    // Strings compare with strings: a string bound of a string field is Cerberus' own.
    expect(start(bounded("a", "string"))).not.toThrow();
  });

  it("accepts Eve's MONGO_* spellings", () => {
    expect(start({ MONGO_DBNAME: "legacy", MONGO_QUERY_BLACKLIST: ["$where"], DOMAIN: {} })).not.toThrow();
  });
});
