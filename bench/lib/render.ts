// The JSON renderer alone, on a collection page's body (25 of the bench's `people` as everest
// sends them, links and meta included): what the rendering rows of bench/README.md measure. A
// microsecond figure steadier than a whole request's on this shared machine, for comparing two
// versions of src/render/ in alternating runs.
//   node --import tsx bench/lib/render.ts ; bun bench/lib/render.ts ; deno run -A bench/lib/render.ts
//   … --flat   also makes the text flat, as writing it to a socket does (a rope is copied then)
import process from "node:process";
import { ObjectId } from "bson";
import { buildPackage, DIST } from "./package.ts";
import { person } from "./people.ts";

buildPackage();
const { toJson } = (await import(`${DIST}src/render/json.js`)) as typeof import("../../src/render/json.ts");

const ROUNDS = 3;
const PER_ROUND = 3000;
const flat = process.argv.includes("--flat");

const now = new Date(Math.floor(Date.now() / 1000) * 1000);
const items = Array.from({ length: 25 }, (_, i) => {
  const { born, ...rest } = person(i);
  const id = new ObjectId();
  return {
    ...rest,
    born: new Date(born as string),
    _updated: now,
    _created: now,
    _etag: "3c7e3c2e5abc2b2f60e5c9407fde8362c75c4150",
    _id: id,
    _links: { self: { title: "person", href: `people/${id.toHexString()}` } },
  };
});
const body = {
  _items: items,
  _links: { parent: { title: "home", href: "/" }, self: { title: "people", href: "people" }, next: { title: "next page", href: "people?page=2" } },
  _meta: { page: 1, max_results: 25, total: 10000 },
};
const encoder = new TextEncoder();
const render = flat ? () => encoder.encode(toJson(body)).length : () => toJson(body).length;

for (let round = 0; round < ROUNDS; round++) {
  let bytes = 0;
  const start = performance.now();
  for (let i = 0; i < PER_ROUND; i++) bytes += render();
  const perBody = ((performance.now() - start) * 1000) / PER_ROUND;
  console.log(`page body (${bytes / PER_ROUND} bytes${flat ? ", made flat" : ""}): ${perBody.toFixed(2)} µs`);
}
