import { createHandler } from "./src/handler.ts";
const h = createHandler({ DOMAIN: { people: { resource_methods: ["GET", "POST"], pagination_cursor: true, pagination_count: "exact", schema: { name: { type: "string" }, age: { type: "integer" } }, datasource: { default_sort: [["age", 1]] } } }, PAGINATION_DEFAULT: 3 } as any);
const post = await h(new Request("http://x/people", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(Array.from({ length: 8 }, (_, i) => ({ name: "p" + i, age: i % 3 }))) }));
console.log(post.status);
let url: string | null = "people";
while (url) {
  const r = await h(new Request("http://x/" + url));
  const body: any = await r.json();
  console.log(r.status, r.headers.get("x-total-count"), r.headers.get("vary"), JSON.stringify(body._meta), body._items?.map((d: any) => d.name + ":" + d.age).join(","));
  console.log("  links", Object.keys(body._links ?? {}).join(","), body._links?.next?.href?.slice(0, 60), body._error);
  url = body._links?.next?.href ?? null;
}
const last = await h(new Request("http://x/people"));
const lb: any = await last.json();
const r2 = await h(new Request("http://x/" + lb._links.last.href));
const b2: any = await r2.json();
console.log("last", b2._items.map((d: any) => d.name + ":" + d.age).join(","), Object.keys(b2._links));
const r3 = await h(new Request("http://x/" + b2._links.prev.href));
const b3: any = await r3.json();
console.log("prev of last", b3._items.map((d: any) => d.name + ":" + d.age).join(","), Object.keys(b3._links));
const bad = await h(new Request("http://x/people?cursor=abc"));
console.log(bad.status, await bad.text());
const bad2 = await h(new Request("http://x/people?count=bogus"));
console.log(bad2.status, await bad2.text());
const est = await h(new Request("http://x/people", { headers: { prefer: "count=estimated" } }));
console.log(est.status, [...est.headers].filter(([k]) => /count|prefer|vary/i.test(k)), (await est.json())._meta);
const other = await h(new Request("http://x/people?" + lb._links.next.href.split("?")[1] + "&sort=-age"));
console.log(other.status, await other.text());
