import { openApiDocument } from "./src/openapi/document.ts";
import { validate, compileErrors } from "@readme/openapi-parser";
import { readFileSync } from "node:fs";
const s = JSON.parse(readFileSync("examples/settings.json","utf8"));
const doc = openApiDocument(s);
const r = await validate(structuredClone(doc) as never);
console.log(r.valid, r.valid ? "" : compileErrors(r), (r as any).warnings);
