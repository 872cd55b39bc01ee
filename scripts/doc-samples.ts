// The code of the documentation, compiled. Every ```ts / ```typescript / ```js / ```javascript /
// ```mjs block of README.md and docs/*.md is type-checked (strict) as a module of its own, as a
// user of the package would write it: `everest-api` and its subpaths (`everest-api/node`, …)
// resolve through package.json's exports map, so only the public entry points can be reached.
// The rules a block must follow (README.md, "Code in the documentation"):
// - it imports from `everest-api…`, Node's built-ins or another installed package, never by a
//   relative path (`./src/…` is not what a user has);
// - `settings` (Settings) and `handler` (Handler) may be used without being declared, as may
//   `Deno` and `Bun` (typed any: their types are not installed here); anything else a block
//   uses it declares (`declare const users: UserStore;`);
// - a block that is part of something larger (a resource inside DOMAIN, a few settings lines)
//   says so in its info string: ```ts fragment. A fragment is not compiled, but its import
//   lines are: each must name an export that exists.
// All blocks are compiled in one TypeScript program, so the check costs one compilation.
// `npm test` (test/doc-samples.test.ts) compiles them against the sources, through the exports
// map's `everest-source` condition; `npm run test:package` against the declarations of the
// installed tarball:
//   node --import tsx scripts/doc-samples.ts <project with everest-api installed>
import { readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

export interface CodeBlock {
  /** The Markdown file, relative to the repository. */
  file: string;
  /** Line of the block's first code line in that file (1-based). */
  line: number;
  language: "ts" | "js";
  fragment: boolean;
  code: string;
}

export interface Finding {
  file: string;
  line: number;
  message: string;
}

const LANGUAGES: Record<string, CodeBlock["language"]> = { ts: "ts", typescript: "ts", js: "js", javascript: "js", mjs: "js" };

/** The TypeScript and JavaScript blocks of a Markdown text, fenced with ``` or ~~~. */
export function codeBlocks(file: string, markdown: string): CodeBlock[] {
  const lines = markdown.split("\n");
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([^\s`~]*)(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, info, rest] = open as unknown as [string, string, string, string, string];
    let end = i + 1;
    while (end < lines.length && !new RegExp(`^\\s*${fence[0]}{${fence.length},}\\s*$`).test(lines[end]!)) end++;
    const language = LANGUAGES[info.toLowerCase()];
    if (language) {
      const code = lines.slice(i + 1, end).map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line.trimStart()));
      blocks.push({ file, line: i + 2, language, fragment: rest.trim().split(/\s+/).includes("fragment"), code: code.join("\n") });
    }
    i = end;
  }
  return blocks;
}

/** A fragment's import declarations, each on the line it had. */
function importsOf(block: CodeBlock): string {
  const source = ts.createSourceFile("fragment.ts", block.code, ts.ScriptTarget.ES2022, true);
  const lines = block.code.split("\n").map(() => "");
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) && !(ts.isExportDeclaration(statement) && statement.moduleSpecifier)) continue;
    const first = source.getLineAndCharacterOfPosition(statement.getStart()).line;
    lines[first] = statement.getText().replace(/\s*\n\s*/g, " ");
  }
  return lines.join("\n");
}

/** Import specifiers that are paths, which a user of the package does not have. */
function relativeImports(block: CodeBlock, text: string): Finding[] {
  const source = ts.createSourceFile("block.ts", text, ts.ScriptTarget.ES2022, true);
  const found: Finding[] = [];
  for (const statement of source.statements) {
    const specifier = ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement) ? statement.moduleSpecifier : undefined;
    if (specifier && ts.isStringLiteral(specifier) && /^[./]/.test(specifier.text)) {
      const line = block.line + source.getLineAndCharacterOfPosition(specifier.getStart()).line;
      found.push({ file: block.file, line, message: `imports '${specifier.text}': import from the package ('everest-api', 'everest-api/node', …), as a user would` });
    }
  }
  return found;
}

const PRELUDE = [
  'declare const settings: import("everest-api").Settings;',
  'declare const handler: import("everest-api").Handler;',
  "declare const Deno: any;",
  "declare const Bun: any;",
].join("\n");

/** The Markdown pages whose code is checked: README.md and docs/*.md. */
export function documentationBlocks(repository: string): CodeBlock[] {
  const pages = ["README.md", ...readdirSync(join(repository, "docs")).filter((name) => name.endsWith(".md")).map((name) => `docs/${name}`)];
  return pages.flatMap((page) => codeBlocks(page, readFileSync(join(repository, page), "utf8")));
}

/**
 * Compiles the blocks (fragments: their imports) in one program; what it finds, by Markdown line.
 * `root`: the repository (the package resolves itself through its exports map, `conditions`
 * choosing the sources) or a project that has the package installed (no conditions: its
 * declarations).
 */
export function checkCodeBlocks(root: string, blocks: CodeBlock[], conditions: string[] = ["everest-source"]): Finding[] {
  // The blocks live in a directory of `root` that is never written, so that `everest-api`
  // resolves from there as it would for a file of that project.
  const dir = join(root, ".doc-samples");
  const sources = new Map<string, { text: string; block: CodeBlock | null }>();
  sources.set(join(dir, "prelude.d.ts"), { text: PRELUDE, block: null });
  const findings: Finding[] = [];
  for (const block of blocks) {
    const body = block.fragment ? importsOf(block) : block.code;
    findings.push(...relativeImports(block, body));
    const name = `${basename(block.file, ".md")}-${block.line}.${block.language === "ts" ? "ts" : "mjs"}`;
    // `export {}` makes every block a module, so one block's names never meet another's.
    sources.set(join(dir, name), { text: `${body}\nexport {};\n`, block });
  }

  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    customConditions: conditions,
    lib: ["lib.es2023.d.ts", "lib.dom.d.ts", "lib.dom.iterable.d.ts"],
    types: ["node"],
    typeRoots: [join(root, "node_modules", "@types")],
    strict: true,
    noImplicitOverride: true,
    allowJs: true,
    checkJs: true,
    allowImportingTsExtensions: true,
    resolveJsonModule: true,
    esModuleInterop: true,
    skipLibCheck: true,
    noEmit: true,
  };
  const host = ts.createCompilerHost(options);
  const { fileExists, readFile, getSourceFile } = host;
  host.getCurrentDirectory = () => root;
  host.fileExists = (path) => sources.has(path) || fileExists.call(host, path);
  host.readFile = (path) => sources.get(path)?.text ?? readFile.call(host, path);
  host.getSourceFile = (path, language, onError, create) => {
    const source = sources.get(path);
    return source ? ts.createSourceFile(path, source.text, language, true) : getSourceFile.call(host, path, language, onError, create);
  };
  const program = ts.createProgram([...sources.keys()], options, host);
  for (const diagnostic of program.getOptionsDiagnostics()) findings.push({ file: "(compiler options)", line: 0, message: ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n") });
  for (const [path, { block }] of sources) {
    const file = program.getSourceFile(path)!;
    for (const diagnostic of [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)]) {
      const line = diagnostic.start === undefined ? 0 : file.getLineAndCharacterOfPosition(diagnostic.start).line;
      const message = `TS${diagnostic.code}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n")}`;
      findings.push(block ? { file: block.file, line: block.line + line, message } : { file: "(prelude)", line: line + 1, message });
    }
  }
  return findings;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const project = process.argv[2];
  if (!project) throw new Error("usage: doc-samples.ts <project with everest-api installed>");
  const blocks = documentationBlocks(fileURLToPath(new URL("../", import.meta.url)));
  const findings = checkCodeBlocks(project, blocks, []);
  for (const finding of findings) console.error(`${finding.file}:${finding.line}: ${finding.message}`);
  console.log(`${blocks.length} code blocks of the documentation, ${findings.length} problems`);
  process.exitCode = findings.length ? 1 : 0;
}
