// The data every bench serves: the reference `people` resource (as in test/fixtures/reference) with a
// unique `lastname` and an indexed, low-cardinality `team`, and a deterministic generator so
// everest and the hand-written equivalent hold the same documents.
import type { Settings } from "../../src/settings/types.ts";

/** Documents sharing one `team` value, whatever the collection size, so a `team` query returns a constant amount. */
const TEAM_SIZE = 10;

export const settings: Settings = {
  RESOURCE_METHODS: ["GET", "POST"],
  ITEM_METHODS: ["GET", "PATCH"],
  DOMAIN: {
    people: {
      item_title: "person",
      mongo_indexes: { team: { key: [["team", 1]] } },
      schema: {
        firstname: { type: "string", minlength: 1, maxlength: 10 },
        lastname: { type: "string", minlength: 1, maxlength: 15, required: true, unique: true },
        role: { type: "list", allowed: ["author", "contributor", "copy"] },
        location: { type: "dict", schema: { address: { type: "string" }, city: { type: "string" } } },
        born: { type: "datetime" },
        team: { type: "integer" },
      },
    },
  },
};

const FIRST = ["John", "Serena", "Mark", "Ada", "Linus", "Grace", "Ken", "Barbara"];
const CITIES = ["Auburn", "Ashfield", "Turin", "Lyon", "Quito", "Oslo", "Perth", "Kyoto"];
const ROLES = [["author"], ["contributor"], ["copy", "author"]];

/** The i-th document as a client would POST it; `tag` keeps lastnames of separate batches apart. */
export function person(i: number, tag = "p"): Record<string, unknown> {
  return {
    firstname: FIRST[i % FIRST.length],
    lastname: `${tag}${i}`,
    role: ROLES[i % ROLES.length],
    location: { address: `${i} South Gay Street`, city: CITIES[i % CITIES.length] },
    born: new Date(Date.UTC(1950 + (i % 50), i % 12, 1 + (i % 28), 14, 37, 13)).toUTCString(),
    team: Math.floor(i / TEAM_SIZE),
  };
}

/** Sends `count` generated documents to a fetch handler in bulk POSTs, as a client would load them. */
export async function seed(fetch: (request: Request) => Promise<Response> | Response, origin: string, count: number): Promise<void> {
  const batch = 1000;
  for (let start = 0; start < count; start += batch) {
    const docs = [];
    for (let i = start; i < Math.min(count, start + batch); i++) docs.push(person(i));
    const response = await fetch(
      new Request(`${origin}/people`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(docs) }),
    );
    if (response.status !== 201) throw new Error(`seeding failed with ${response.status}: ${(await response.text()).slice(0, 300)}`);
  }
}
