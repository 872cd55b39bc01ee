// The documentation's code compiles against the package's public API (scripts/doc-samples.ts
// has the rules; README.md "Code in the documentation" says them for writers), so a renamed
// export or a stale import fails here rather than in a reader's editor.
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { checkCodeBlocks, codeBlocks, documentationBlocks, type CodeBlock } from "../scripts/doc-samples.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
// One compilation of every block takes seconds, more on a busy machine.
const COMPILE_MS = 120_000;

describe("the documentation's code", () => {
  it(
    "compiles: every TypeScript and JavaScript block of README.md and docs/*.md",
    () => {
      const blocks = documentationBlocks(ROOT);
      expect(blocks.length).toBeGreaterThan(10);
      const findings = checkCodeBlocks(ROOT, blocks).map((f) => `${f.file}:${f.line}: ${f.message}`);
      expect(findings).toEqual([]);
    },
    COMPILE_MS,
  );
});

describe("the check itself", () => {
  const page = (text: string) => codeBlocks("docs/page.md", text);

  it("finds ts and js blocks with their lines and fragment markers, and nothing else", () => {
    const text = ["# Page", "```ts", "const a = 1;", "```", "", "```json", "{}", "```", "- item", "  ```js fragment", "  b();", "  ```", "~~~typescript", "c;", "~~~"].join("\n");
    expect(page(text)).toEqual<CodeBlock[]>([
      { file: "docs/page.md", line: 3, language: "ts", fragment: false, code: "const a = 1;" },
      { file: "docs/page.md", line: 11, language: "js", fragment: true, code: "b();" },
      { file: "docs/page.md", line: 14, language: "ts", fragment: false, code: "c;" },
    ]);
  });

  it(
    "reports a stale import, a type error, a path import and a fragment's missing export, at their Markdown lines",
    () => {
      const text = [
        "```ts",
        'import { createHandler } from "everest-api";',
        'import { createHandle } from "everest-api";',
        "const handler = createHandler({ DOMAIN: {} });",
        "const n: number = handler;",
        "```",
        "```ts",
        'import { createHandler } from "./src/index.ts";',
        "```",
        "```ts fragment",
        'import { BasicAuth, NoSuchAuth } from "everest-api";',
        "people: { schema: {} },",
        "```",
        "```ts",
        'import { createHandler } from "everest";',
        "```",
        "```ts",
        'import { serve } from "everest-api/node";',
        "await serve(handler, { port: 0 });",
        "createHandler(settings);",
        "```",
      ].join("\n");
      const findings = checkCodeBlocks(ROOT, page(text));
      const at = (line: number) => findings.filter((f) => f.line === line).map((f) => f.message);
      expect(at(3)).toEqual([expect.stringMatching(/^TS2724: '"everest-api"' has no exported member named 'createHandle'/)]);
      expect(at(5)).toEqual([expect.stringMatching(/^TS2322: Type 'Handler' is not assignable to type 'number'/)]);
      expect(at(8)).toEqual([expect.stringContaining("imports './src/index.ts': import from the package"), expect.stringMatching(/^TS2307: Cannot find module '.\/src\/index.ts'/)]);
      expect(at(11)).toEqual([expect.stringMatching(/^TS2305: Module '"everest-api"' has no exported member 'NoSuchAuth'/)]);
      expect(at(15)).toEqual([expect.stringMatching(/^TS2307: Cannot find module 'everest'/)]);
      // settings and handler are given; createHandler is not, in a block that does not import it.
      expect(at(19)).toEqual([]);
      expect(at(20)).toEqual([expect.stringMatching(/^TS2304: Cannot find name 'createHandler'/)]);
      expect(findings).toHaveLength(7);
    },
    COMPILE_MS,
  );
});
