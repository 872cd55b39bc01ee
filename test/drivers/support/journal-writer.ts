// A child process for the crash tests: opens the journal given as argument with an aggressive
// compaction policy, seeds it when empty, then runs writers that each follow the sequence of
// writerStep and print `ack <writer> <step>` once a write is acknowledged. Every step of a
// compaction's file replacement is announced (`phase …`) before it happens, so the parent can
// SIGKILL this process at chosen points of it.
import { NodeFileAccess } from "../../../adapters/node-files.ts";
import { MemoryDriver } from "../../../src/drivers/memory/index.ts";
import type { FileReplacement } from "../../../src/drivers/types.ts";
import { BULK, people, writerStep } from "./journal-steps.ts";

const say = (line: string) => process.stdout.write(`${line}\n`);

class AnnouncingFiles extends NodeFileAccess {
  override async replacement(path: string): Promise<FileReplacement> {
    say("phase replacement");
    const inner = await super.replacement(path);
    return {
      write: (text) => {
        say("phase write");
        return inner.write(text);
      },
      commit: async () => {
        say("phase commit");
        await inner.commit();
        say("phase committed");
      },
      discard: () => inner.discard(),
    };
  }
}

// Writers "0": seed the journal and exit.
const [path, round, writers] = process.argv.slice(2) as [string, string, string];
const driver = await MemoryDriver.open({ databaseName: "everest", journal: { files: new AnnouncingFiles(), path, compaction: { ratio: 1.05, minSize: 0 } } });
if ((await driver.count(people, {})) === 0) {
  await driver.insertMany(people, Array.from({ length: BULK }, (_, i) => ({ _id: `bulk-${i}`, i, pad: "b".repeat(300) })));
}
say("ready");
if (writers === "0") await driver.close();
await Promise.all(
  Array.from({ length: Number(writers) }, async (_, w) => {
    const writer = `${round}-${w}`;
    await driver.insertMany(people, [{ _id: `${writer}:seed`, writer, seed: true }]);
    say(`ack ${writer} -1`);
    for (let step = 0; ; step++) {
      await writerStep(driver, writer, step);
      say(`ack ${writer} ${step}`);
    }
  }),
);
