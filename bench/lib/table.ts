// Markdown tables padded to line up in a terminal too, so the output pastes into bench/README.md.

export function table(header: string[], rows: string[][]): string {
  const widths = header.map((cell, i) => Math.max(cell.length, ...rows.map((row) => (row[i] ?? "").length)));
  // Text columns (the first) align left, numbers right.
  const line = (cells: string[]) => `| ${cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join(" | ")} |`;
  const rule = `|${widths.map((width, i) => (i === 0 ? `:${"-".repeat(width + 1)}` : `${"-".repeat(width + 1)}:`)).join("|")}|`;
  return [line(header), rule, ...rows.map(line)].join("\n");
}

export const fmt = {
  rps: (value: number) => Math.round(value).toLocaleString("en-US"),
  ms: (value: number) => (value < 10 ? value.toFixed(2) : value.toFixed(1)),
  mb: (bytes: number | null) => (bytes === null ? "–" : (bytes / 2 ** 20).toFixed(0)),
  ratio: (value: number) => `${value.toFixed(2)}×`,
  us: (ms: number) => `${(ms * 1000).toFixed(1)} µs`,
};
