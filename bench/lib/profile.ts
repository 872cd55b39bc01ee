// A CPU profile of part of a bench run (the measured rounds, not the seeding) through the
// inspector protocol, which Node, Deno and Bun's node:inspector all answer. A 100 µs sampling
// interval instead of the default 1 ms, so a run of a few seconds gives enough samples to rank
// functions that cost a few per cent of a 20 µs request.
export async function startProfile(): Promise<{ stop(path: string): Promise<void> }> {
  const { Session } = await import("node:inspector/promises");
  const { writeFileSync } = await import("node:fs");
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 100 });
  await session.post("Profiler.start");
  return {
    async stop(path) {
      const { profile: result } = await session.post("Profiler.stop");
      writeFileSync(path, JSON.stringify(result));
      session.disconnect();
    },
  };
}
