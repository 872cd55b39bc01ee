// Documents validated per second by each validation engine, for a 20-field document with
// sub-documents and lists (POST, valid document; no database rule, so that only validation is
// measured). Per second of this process's CPU time, which a busy machine disturbs less than
// wall-clock time; both are printed. Run: npx tsx bench/validation.ts
import { normalizeSettings } from "../src/settings/normalize.ts";
import type { Schema } from "../src/settings/types.ts";
import { compileValidator, type ValidationEngine } from "../src/validation/index.ts";
import type { ValidationEnv } from "../src/validation/types.ts";

const schema: Schema = {
  firstname: { type: "string", minlength: 1, maxlength: 10 },
  lastname: { type: "string", minlength: 1, maxlength: 15, required: true },
  email: { type: "string", regex: "[^@]+@[^@]+\\.[a-z]+" },
  age: { type: "integer", min: 0, max: 150 },
  score: { type: "number", min: 0 },
  active: { type: "boolean", default: true },
  born: { type: "datetime" },
  manager: { type: "objectid", nullable: true },
  role: { type: "list", allowed: ["author", "contributor", "copy"] },
  tags: { type: "list", schema: { type: "string", maxlength: 20 } },
  location: {
    type: "dict",
    schema: {
      address: { type: "string" },
      city: { type: "string", required: true },
      geo: { type: "dict", schema: { lat: { type: "number", min: -90, max: 90 }, lng: { type: "number", min: -180, max: 180 } } },
    },
  },
  phones: { type: "list", schema: { type: "dict", schema: { kind: { type: "string", allowed: ["home", "work"] }, number: { type: "string", regex: "[0-9 +-]+" } } } },
  status: { type: "string", allowed: ["new", "active", "gone"] },
  notes: { type: "string", empty: true, maxlength: 200 },
  level: { type: "integer", allowed: [1, 2, 3] },
  ratio: { type: "float" },
  nickname: { type: "string", nullable: true },
  counts: { type: "dict", valuesrules: { type: "integer" } },
  pair: { type: "list", items: [{ type: "string" }, { type: "integer" }] },
  website: { type: "string", regex: "https?://.+" },
};

const document = {
  firstname: "John",
  lastname: "Doe",
  email: "john@example.com",
  age: "42",
  score: 9.5,
  born: "Thu, 27 Aug 1970 14:37:13 GMT",
  manager: "5f0000000000000000000001",
  role: ["author", "copy"],
  tags: ["a", "b", "c"],
  location: { address: "422 South Gay Street", city: "Auburn", geo: { lat: 32.6, lng: -85.5 } },
  phones: [
    { kind: "home", number: "+1 555 0100" },
    { kind: "work", number: "+1 555 0101" },
  ],
  status: "active",
  notes: "",
  level: 2,
  ratio: 0.5,
  nickname: null,
  counts: { x: 1, y: 2 },
  pair: ["p", 1],
  website: "https://example.com",
};

const config = normalizeSettings({ DOMAIN: { people: { schema } } });
const resource = config.DOMAIN.people!;
const env: ValidationEnv = { config, resource, findOne: async () => null };

async function measure(engine: ValidationEngine): Promise<{ cpu: number; wall: number }> {
  const validator = compileValidator(resource, config, {}, { engine });
  const first = await validator.validate(document, "POST", env);
  if (!first.valid) throw new Error(`benchmark document invalid: ${JSON.stringify(first.issues)}`);
  for (let i = 0; i < 2000; i++) await validator.validate(document, "POST", env);
  let count = 0;
  const cpu = process.cpuUsage();
  const start = performance.now();
  while (performance.now() - start < 3000) {
    for (let i = 0; i < 100; i++) await validator.validate(document, "POST", env);
    count += 100;
  }
  const wall = (performance.now() - start) / 1000;
  const used = process.cpuUsage(cpu);
  return { cpu: count / ((used.user + used.system) / 1e6), wall: count / wall };
}

const format = (n: number) => Math.round(n).toLocaleString("en-US").padStart(9);
for (const engine of ["jsonschema", "closures"] as const) {
  const { cpu, wall } = await measure(engine);
  console.log(`${engine.padEnd(10)} ${format(cpu)} documents per CPU second ${format(wall)} documents per second`);
}
