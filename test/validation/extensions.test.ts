// The extension API: custom rules, custom types, named coercers and field validators, sync
// and async.
import { ObjectId } from "bson";
import { describe, expect, it } from "vitest";
import type { FieldValidator, RuleContext, ValidatorExtensions } from "../../src/validation/index.ts";
import { ENGINES, harness, single } from "./support.ts";

const ID = new ObjectId("5f0000000000000000000001");
const later = <T>(value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), 1));

const extensions: ValidatorExtensions = {
  rules: {
    isodd: (ruleValue, field, value, ctx) => {
      if (ruleValue && typeof value === "number" && value % 2 === 0) ctx.error(field, "must be an odd number");
    },
    available: async (ruleValue, field, value, ctx) => {
      const taken = await later(value === "taken");
      if (ruleValue && taken) ctx.error(field, `'${String(value)}' is taken`);
    },
    mirrors: {
      check: (ruleValue) => (typeof ruleValue === "string" ? undefined : "must name a field"),
      validate: (other, field, value, ctx) => {
        const document = ctx.document as Record<string, unknown>;
        if (document[other] !== value) ctx.error(other, `must equal '${String(field)}'`);
      },
    },
  },
  types: { even: (value) => typeof value === "number" && value % 2 === 0 },
  validators: { lowercase: (field, value, error) => (typeof value === "string" && value !== value.toLowerCase() ? error(field, "must be lowercase") : undefined) },
};

describe.each(ENGINES)("extensions (%s engine)", (engine) => {
  describe("custom rules", () => {
    it("report through ctx.error, wherever the field is", async () => {
      const t = single({ n: { type: "integer", isodd: true }, o: { type: "dict", schema: { n: { isodd: true } } }, l: { type: "list", schema: { isodd: true } } }, engine, { extensions });
      expect(await t.issues({ n: 3, o: { n: 5 }, l: [1] })).toEqual({});
      expect(await t.issues({ n: 2, o: { n: 4 }, l: [1, 6] })).toEqual({ l: { 1: "must be an odd number" }, n: "must be an odd number", o: { n: "must be an odd number" } });
    });

    it("can be asynchronous", async () => {
      const t = single({ name: { type: "string", available: true } }, engine, { extensions });
      expect(await t.issues({ name: "free" })).toEqual({});
      expect(await t.issues({ name: "taken" })).toEqual({ name: "'taken' is taken" });
    });

    it("can report on a sibling field, and see the document", async () => {
      const t = single({ password: { type: "string", mirrors: "confirm" }, confirm: { type: "string" } }, engine, { extensions });
      expect(await t.issues({ password: "a", confirm: "a" })).toEqual({});
      expect(await t.issues({ password: "a", confirm: "b" })).toEqual({ confirm: "must equal 'password'" });
    });

    it("are skipped once the type is wrong, and come before the built-in rules' errors", async () => {
      const t = single({ n: { type: "integer", max: 1, isodd: true } }, engine, { extensions });
      expect(await t.issues({ n: "x" })).toEqual({ n: "must be of integer type" });
      expect(await t.issues({ n: 4 })).toEqual({ n: ["must be an odd number", "max value is 1"] });
    });

    it("work inside *of definitions, asynchronous ones too", async () => {
      const t = single({ name: { type: "string", anyof: [{ available: true }, { regex: "admin" }] } }, engine, { extensions });
      expect(await t.issues({ name: "admin" })).toEqual({});
      expect(await t.issues({ name: "taken" })).toEqual({ name: ["no definitions validate", { "anyof definition 0": "'taken' is taken", "anyof definition 1": "value does not match regex 'admin'" }] });
    });

    it("receive the request's context", async () => {
      const seen: Array<Partial<RuleContext>> = [];
      const t = single({ o: { type: "dict", schema: { a: { spy: true } } } }, engine, {
        extensions: { rules: { spy: (_v, _f, _value, ctx) => void seen.push({ path: ctx.path, mode: ctx.mode, root: ctx.root, original: ctx.original, document: ctx.document }) } },
      });
      await t.check({ o: { a: 1 } }, "PATCH", { original: { _id: ID } });
      expect(seen).toEqual([{ path: ["o", "a"], mode: "PATCH", root: { o: { a: 1 } }, original: { _id: ID }, document: { a: 1 } }]);
    });
  });

  it("custom types are used by the type rule", async () => {
    const t = single({ n: { type: "even" }, m: { type: ["even", "string"] } }, engine, { extensions });
    expect(await t.issues({ n: 2, m: "x" })).toEqual({});
    expect(await t.issues({ n: 3, m: 3 })).toEqual({ m: "must be of ['even', 'string'] type", n: "must be of even type" });
  });

  describe("field validators (check_with / validator)", () => {
    it("accept a function, a list, or a registered name", async () => {
      const short: FieldValidator = (field, value, error) => {
        if (String(value).length > 3) error(field, "too long");
      };
      const t = single({ a: { type: "string", validator: short }, b: { type: "string", check_with: ["lowercase", short] } }, engine, { extensions });
      expect(await t.issues({ a: "abc", b: "abc" })).toEqual({});
      // Cerberus' sort leaves two errors of one rule in this order.
      expect(await t.issues({ a: "abcd", b: "ABCD" })).toEqual({ a: "too long", b: ["too long", "must be lowercase"] });
    });

    it("can be asynchronous", async () => {
      const said: FieldValidator = async (field, value, error) => ((await later(value)) === "no" ? error(field, "said no") : undefined);
      const t = single({ a: { type: "string", check_with: said } }, engine);
      expect(await t.issues({ a: "yes" })).toEqual({});
      expect(await t.issues({ a: "no" })).toEqual({ a: "said no" });
    });

    it("are skipped for an empty value when the field defines empty", async () => {
      const always: FieldValidator = (field, _value, error) => error(field, "always");
      const t = single({ a: { type: "string", empty: true, check_with: "lowercase" }, b: { type: "string", check_with: always } }, engine, { extensions });
      expect(await t.issues({ a: "", b: "" })).toEqual({ b: "always" });
    });
  });
});

describe.each(ENGINES)("the example of docs/validation.md (%s engine)", (engine) => {
  const validation: ValidatorExtensions = {
    rules: {
      isodd: (ruleValue, field, value, ctx) => {
        if (ruleValue && typeof value === "number" && value % 2 === 0) ctx.error(field, "must be an odd number");
      },
      not_blocked: {
        check: (ruleValue) => (typeof ruleValue === "string" ? undefined : "must name a resource"),
        validate: async (resource, field, value, ctx) => {
          if (await ctx.env.findOne(resource, { name: value })) ctx.error(field, `'${value}' is blocked`);
        },
      },
    },
    types: { even: (value) => typeof value === "number" && value % 2 === 0 },
    coercers: { trim: (value) => (typeof value === "string" ? value.trim() : value) },
    defaultSetters: { slug: (doc) => String(doc.title).trim().toLowerCase().replace(/\W+/g, "-") },
    validators: {
      lowercase: (field, value, error) => {
        if (typeof value === "string" && value !== value.toLowerCase()) error(field, "must be lowercase");
      },
    },
  };
  const tags: FieldValidator = (field, value, error) => ((value as string[]).length > 5 ? error(field, "too many tags") : undefined);
  const h = harness(
    {
      DOMAIN: {
        blocked: { schema: { name: { type: "string" } } },
        posts: {
          schema: {
            title: { type: "string", coerce: "trim", required: true },
            slug: { type: "string", default_setter: "slug", check_with: "lowercase" },
            author: { type: "string", not_blocked: "blocked" },
            votes: { type: "integer", isodd: true },
            pages: { type: "even" },
            tags: { type: "list", check_with: tags },
          },
        },
      },
    },
    { engine, extensions: validation, store: { blocked: [{ _id: ID, name: "spam" }] } },
  );

  it("works as the documentation says", async () => {
    expect((await h.validate("posts", { title: " Hello ", votes: 2, author: "spam" })).issues).toEqual({ author: "'spam' is blocked", votes: "must be an odd number" });
    const ok = await h.validate("posts", { title: " Hello ", votes: 3, pages: 4, tags: ["a"] });
    expect(ok.issues).toEqual({});
    expect(ok.document).toMatchObject({ title: "Hello", slug: "hello" });
  });
});

describe("an async coercer or default setter", () => {
  // A user's port that marks them async (an awaited lookup, say) gets the server's 500 and a
  // log line naming the mistake, not a 422 blaming the client nor a promise stored as the value.
  it("answers 500 and stores nothing, where it would otherwise store its promise", async () => {
    const { createHandler } = await import("../../src/handler.ts");
    const { createLogger } = await import("../../src/logging.ts");
    const logged: string[] = [];
    const handler = createHandler(
      { RESOURCE_METHODS: ["GET", "POST"], DOMAIN: { notes: { schema: { a: { type: "string", coerce: "upper" }, b: { type: "string", default_setter: "later" } } } } },
      {
        validation: { coercers: { upper: async (value: unknown) => String(value).toUpperCase() }, defaultSetters: { later: async () => "x" } },
        logger: createLogger((record) => void logged.push(String(record.error))),
      },
    );
    const post = (body: unknown) => handler(new Request("http://x/notes", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) }));
    expect((await post({ a: "x", b: "y" })).status).toBe(500);
    expect((await post({})).status).toBe(500);
    expect(logged.join("\n")).toMatch(/a coercer returned a promise[\s\S]*a default setter returned a promise/);
    expect(((await (await handler(new Request("http://x/notes"))).json()) as { _meta: { total: number } })._meta.total).toBe(0);
  });
});
