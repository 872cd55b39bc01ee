// A child process for the sqlite crash test: opens the sqlite driver on the file given, then
// writes forever, each step an insert and a conditional update of the writer's counter, and
// prints `ack <writer> <step>` once both are acknowledged, so the parent can SIGKILL it at any
// moment and check that every acknowledged write survived.
import { createDriver } from "../../../src/drivers/registry.ts";

const [path, writer] = process.argv.slice(2) as [string, string];
const driver = await createDriver(`sqlite:${path}`, { databaseName: "everest", settings: {} });
const t = { collection: "acks" };
const counter = `${writer}:counter`;
if ((await driver.count(t, { _id: counter })) === 0) await driver.insertMany(t, [{ _id: counter, step: -1 }]);
process.stdout.write("ready\n");
for (let step = 0; ; step++) {
  await driver.insertMany(t, [{ _id: `${writer}:${step}`, writer, step, pad: "x".repeat(200) }]);
  if (!(await driver.updateOne(t, { _id: counter, step: step - 1 }, { $set: { step } }))) throw new Error(`the counter of ${writer} is not at ${step - 1}`);
  process.stdout.write(`ack ${writer} ${step}\n`);
}
