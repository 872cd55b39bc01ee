// The six HTTP workloads, as Traffic over a server holding the seeded `people`. Reads cycle
// over 50 documents sampled from the server; writes make unique lastnames; PATCH follows each
// document's ETag from response to response, so every request passes its If-Match check.
import { send, type Step, type Traffic } from "./load.ts";
import { person } from "./people.ts";

export interface SampleDoc {
  id: string;
  lastname: string;
  etag: string;
}

export interface Workload {
  name: string;
  traffic(sample: SampleDoc[]): Traffic;
  /** Documents one request writes, where it writes more than one. */
  batch?: number;
}

const JSON_HEADERS = { "Content-Type": "application/json" };

/**
 * Reads the documents the read workloads cycle over (and PATCH edits), from the server itself:
 * the first 50 by default; PATCH under more connections than that needs one per connection.
 */
export async function sampleDocs(url: string, count = 50): Promise<SampleDoc[]> {
  const docs: SampleDoc[] = [];
  for (let page = 1; docs.length < count; page++) {
    const response = await send(`${url}/people?max_results=50&page=${page}`, "GET");
    if (response.status !== 200) throw new Error(`GET /people?max_results=50&page=${page} answered ${response.status}: ${response.body.slice(0, 300)}`);
    const body = JSON.parse(response.body) as { _items: Array<{ _id: string; lastname: string; _etag: string }> };
    if (body._items.length === 0) break;
    docs.push(...body._items.slice(0, count - docs.length).map((doc) => ({ id: doc._id, lastname: doc.lastname, etag: doc._etag })));
  }
  return docs;
}

function cycle(paths: string[]): Traffic {
  let i = 0;
  return { readsResponses: false, next: () => ({ method: "GET", path: paths[i++ % paths.length]! }) };
}

/** Lastnames no seeded document has (`p<i>`) and no earlier bench request used, within one harness process. */
let written = 0;
const freshPerson = () => person(written++, "b");

export const WORKLOADS: Workload[] = [
  { name: "GET collection page", traffic: () => cycle(["/people"]) },
  { name: "GET item by _id", traffic: (sample) => cycle(sample.map((doc) => `/people/${doc.id}`)) },
  {
    name: "GET where unique field",
    traffic: (sample) => cycle(sample.map((doc) => `/people?where=${encodeURIComponent(JSON.stringify({ lastname: doc.lastname }))}`)),
  },
  {
    name: "POST one document",
    traffic: () => ({ readsResponses: false, next: () => ({ method: "POST", path: "/people", headers: JSON_HEADERS, body: JSON.stringify(freshPerson()) }) }),
  },
  {
    name: "PATCH with If-Match",
    traffic: (sample) => {
      // A document is lent to one request at a time and comes back with its new ETag. One whose
      // request a load's end left unanswered may have been edited without this side seeing its
      // new ETag: `settle` reads it again. Without that, ten documents were lost per load of ten
      // connections, and once all were, every PATCH sent a stale ETag and was measured as a 412.
      const free = [...sample];
      const lent = new Set<SampleDoc>();
      let edits = 0;
      return {
        readsResponses: true,
        next: (): Step => {
          const doc = free.pop() ?? sample[0]!;
          lent.add(doc);
          return {
            method: "PATCH",
            path: `/people/${doc.id}`,
            headers: { ...JSON_HEADERS, "If-Match": doc.etag },
            body: JSON.stringify({ firstname: `n${edits++ % 1000}` }),
            done: (status, body) => {
              if (status === 200) doc.etag = (JSON.parse(body) as { _etag: string })._etag;
              lent.delete(doc);
              free.push(doc);
            },
          };
        },
        settle: async (url) => {
          for (const doc of lent) {
            const answer = await send(`${url}/people/${doc.id}`, "GET");
            if (answer.status !== 200) throw new Error(`GET /people/${doc.id} answered ${answer.status}`);
            doc.etag = (JSON.parse(answer.body) as { _etag: string })._etag;
            free.push(doc);
          }
          lent.clear();
        },
      };
    },
  },
  {
    name: "POST 100 documents",
    batch: 100,
    traffic: () => ({
      readsResponses: false,
      next: () => ({ method: "POST", path: "/people", headers: JSON_HEADERS, body: JSON.stringify(Array.from({ length: 100 }, freshPerson)) }),
    }),
  },
];

/** The floor's version of a workload: the same request as everest got, answered by a body of `size` bytes. */
export function floorTraffic(step: Step, size: number): Traffic {
  const { method, headers, body } = step;
  return { readsResponses: false, next: () => ({ method, path: `/${size}`, ...(headers ? { headers } : {}), ...(body ? { body } : {}) }) };
}
