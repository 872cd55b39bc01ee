// The writes of the crash tests' writers (journal-writer.ts), and the state they leave, so the
// parent can tell exactly what a writer's documents must be after a given number of steps.
import type { Doc, Driver, Target } from "../../../src/drivers/types.ts";

export const people: Target = { collection: "people" };
/** Documents the writer process seeds an empty journal with, so a snapshot takes a while to write. */
export const BULK = 3000;
const PAD = "p".repeat(300);

type Step =
  | { kind: "insert"; doc: Doc }
  | { kind: "set"; id: string; v: number }
  | { kind: "replace"; id: string; doc: Doc }
  | { kind: "delete"; id: string };

/** Step `step` of a writer: insert a document, PATCH it, replace it, then delete the previous group's (or the seed). */
function step(writer: string, step: number): Step {
  const group = step - (step % 4);
  const id = `${writer}:${group}`;
  switch (step % 4) {
    case 0:
      return { kind: "insert", doc: { _id: id, writer, v: 0, pad: PAD } };
    case 1:
      return { kind: "set", id, v: step };
    case 2:
      return { kind: "replace", id, doc: { _id: id, writer, v: step, replaced: true, pad: PAD } };
    default:
      return { kind: "delete", id: group === 0 ? `${writer}:seed` : `${writer}:${group - 4}` };
  }
}

export async function writerStep(driver: Driver, writer: string, n: number): Promise<void> {
  const s = step(writer, n);
  if (s.kind === "insert") await driver.insertMany(people, [s.doc]);
  else if (s.kind === "set") await driver.updateOne(people, { _id: s.id }, { $set: { v: s.v } });
  else if (s.kind === "replace") await driver.replaceOne(people, { _id: s.id }, s.doc);
  else await driver.deleteOne(people, { _id: s.id });
}

/** A writer's documents, by `_id`, after its first `steps` steps; -1: before its seed document. */
export function writerState(writer: string, steps: number): Doc[] {
  if (steps < 0) return [];
  const docs = new Map<string, Doc>([[`${writer}:seed`, { _id: `${writer}:seed`, writer, seed: true }]]);
  for (let n = 0; n < steps; n++) {
    const s = step(writer, n);
    if (s.kind === "insert") docs.set(s.doc._id as string, { ...s.doc });
    else if (s.kind === "set") docs.set(s.id, { ...docs.get(s.id)!, v: s.v });
    else if (s.kind === "replace") docs.set(s.id, { ...s.doc });
    else docs.delete(s.id);
  }
  return [...docs.values()].sort((a, b) => String(a._id).localeCompare(String(b._id)));
}
