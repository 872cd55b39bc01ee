// Each event's callbacks have a type of their own (HookSignatures, src/events/hooks.ts): their
// arguments need no annotation, and one written for another event fails to compile rather than
// at run time. `npm run typecheck` checks the types here; the requests show that they describe
// what the callbacks are handed.
import { ObjectId } from "bson";
import { afterAll, describe, expect, expectTypeOf, it } from "vitest";
import type { Doc, Filter } from "../../src/drivers/types.ts";
import type { HookCallback } from "../../src/events/hooks.ts";
import { createHandler } from "../../src/handler.ts";
import type { Settings } from "../../src/settings/types.ts";
import { testApi } from "../support/api.ts";

const settings: Settings = { RESOURCE_METHODS: ["GET", "POST", "DELETE"], DOMAIN: { people: { schema: { name: { type: "string" } } } } };

describe("hook types", () => {
  const seen: string[] = [];
  const api = testApi(settings, {
    hooks: {
      on_pre_POST: (resource, request) => {
        expectTypeOf(resource).toEqualTypeOf<string>();
        seen.push(`pre ${resource} ${request instanceof Request}`);
      },
      on_pre_GET_people: (request, lookup) => {
        expectTypeOf(lookup).toEqualTypeOf<Filter>();
        seen.push(`pre GET ${request.method} ${typeof lookup}`);
      },
      on_insert_people: (documents) => {
        expectTypeOf(documents).toEqualTypeOf<Doc[]>();
        seen.push(`insert ${documents[0]!._created instanceof Date} ${"_id" in documents[0]!}`);
      },
      on_inserted_people: [async (documents) => void seen.push(`inserted ${documents[0]!._id instanceof ObjectId}`)],
      on_post_POST_people: (request, response) => void seen.push(`post ${request.method} ${response.status}`),
      on_fetched_item_people: (document) => void seen.push(`item ${document.name}`),
      on_fetched_resource_people: (response) => void seen.push(`resource ${(response._items as Doc[]).length}`),
      on_delete_resource_people: () => void seen.push("delete resource"),
      on_delete_resource_originals_people: (originals, lookup) => {
        expectTypeOf(originals).toEqualTypeOf<Doc[]>();
        seen.push(`originals ${originals.length} ${JSON.stringify(lookup)}`);
      },
    },
  });
  afterAll(() => api.close());

  it("give each event's callbacks the arguments they are handed", async () => {
    const created = await api.post("/people", { name: "ada" });
    await api.get(`/people/${(await created.json())._id}`);
    await api.get("/people");
    await api.delete("/people");
    expect(seen).toEqual([
      "pre people true",
      "insert true false",
      "inserted true",
      "post POST 201",
      "pre GET GET object",
      "item ada",
      "pre GET GET object",
      "resource 1",
      "delete resource",
      "originals 1 {}",
    ]);
  });

  it("refuse a callback written for another event, in the options and in app.on", () => {
    const handler = createHandler(settings, {
      hooks: {
        // @ts-expect-error a per-resource event is not handed the resource name
        on_insert_people: (resource: string, documents: Doc[]) => void [resource, documents],
        // @ts-expect-error an item is a document, and comes alone
        on_fetched_item_people: (x: number, y: Map<string, string>) => void [x, y],
        // @ts-expect-error a generic event is handed the resource name first
        on_pre_GET: (request: Request) => void request,
      },
    });
    // @ts-expect-error on_delete_item hands a document, not an originals list
    handler.app.on("on_delete_item_people", (originals: Doc[]) => void originals);
    // @ts-expect-error on_fetched_resource is not on_fetched_item: the response is one document
    handler.app.on("on_fetched_resource", (resource: string, items: Doc[]) => void [resource, items]);
    handler.app.on("on_delete_resource_originals", (resource, originals, lookup) => expectTypeOf([resource, originals, lookup] as const).toEqualTypeOf<readonly [string, Doc[], Filter]>());
    handler.app.on("on_pre_GET", (resource, request, lookup) => expectTypeOf([resource, request, lookup] as const).toEqualTypeOf<readonly [string, Request, Filter]>());
    // A callback kept for several events has the general type, which every event takes.
    const general: HookCallback = (...args) => void args;
    expect(() => handler.app.on("on_fetched_item_people", general).on("before_aggregation", general)).not.toThrow();
  });
});

describe("hook types and the user's own document types", () => {
  it("accept a callback that names its documents by a type of the schema's fields", () => {
    type Person = { name: string; _id?: ObjectId };
    const handler = createHandler(settings, {
      hooks: { on_insert_people: (people: Person[]) => void people.map((person) => person.name.length), on_fetched_item_people: (person: Person) => void person.name },
    });
    handler.app.on("on_inserted", (resource: string, people: Person[]) => void [resource, people]);
    // @ts-expect-error still one document per item, not a list of them
    handler.app.on("on_fetched_item_people", (people: Person[]) => void people);
    expect(handler.app).toBeDefined();
  });
});
