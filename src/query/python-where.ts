// The Python-style `where` syntax (docs/decisions.md §3): what Eve's MongoVisitor
// (eve/io/mongo/parser.py) turns into a Mongo query, e.g.
//   lastname == "Doe" and (born < datetime(1980, 1, 1) or role != "author")
// → {"$and": [{"lastname": "Doe"}, {"$or": [{"born": {"$lt": Date}}, {"role": {"$ne": "author"}}]}]}
// Comparisons, and/or, brackets, literals and the calls ObjectId("…") and datetime(…); anything
// else is a 400. A bare (dotted) name on the right is a string, as Eve's visitor reads it
// (`ref == ABC` is `{"ref": "ABC"}`). Where Eve silently produces something odd (`-5` read as 5,
// a failed call leaving the previous value) everest refuses or is exact.
import { ObjectId } from "bson";
import type { Filter } from "../drivers/types.ts";
import { badRequest } from "../errors.ts";
import { tokenize, TokenStream } from "./python-syntax.ts";
import { isObjectIdHex } from "../util/objectid.ts";

const COMPARISONS: Record<string, string | null> = { "==": null, "!=": "$ne", "<": "$lt", "<=": "$lte", ">": "$gt", ">=": "$gte" };

export function parsePythonWhere(text: string, maxDepth: number): Filter {
  const stream = new TokenStream(tokenize(text, { singleQuotes: true }), maxDepth);
  const query = disjunction(stream);
  stream.expectEnd();
  return query;
}

function disjunction(stream: TokenStream): Filter {
  return boolean(stream, "or", "$or", conjunction);
}

function conjunction(stream: TokenStream): Filter {
  return boolean(stream, "and", "$and", condition);
}

/** `a and b and c` is one BoolOp in Python, hence one `$and` with three members. */
function boolean(stream: TokenStream, keyword: string, operator: string, operand: (s: TokenStream) => Filter): Filter {
  const members = [operand(stream)];
  while (stream.accept(keyword)) members.push(operand(stream));
  return members.length === 1 ? members[0]! : { [operator]: members };
}

function condition(stream: TokenStream): Filter {
  if (!stream.accept("(")) return comparison(stream);
  stream.enter();
  const inner = disjunction(stream);
  stream.expect(")");
  stream.leave();
  return inner;
}

function comparison(stream: TokenStream): Filter {
  const field = fieldName(stream);
  const operator = stream.next();
  if (operator.kind !== "op" || !(operator.text in COMPARISONS)) {
    throw badRequest(`expected a comparison after '${field}' but found '${operator.text}'`);
  }
  const value = operand(stream);
  const mongo = COMPARISONS[operator.text]!;
  return { [field]: mongo === null ? value : { [mongo]: value } };
}

/** `name`, `dotted.name` or, as Eve allows, a string literal. */
function fieldName(stream: TokenStream): string {
  const token = stream.next();
  if (token.kind === "string") return token.value as string;
  if (token.kind !== "name" || KEYWORDS.has(token.text)) throw badRequest(`expected a field name but found '${token.text}'`);
  let name = token.text;
  while (stream.accept(".")) {
    const part = stream.next();
    if (part.kind !== "name" || KEYWORDS.has(part.text)) throw badRequest(`bad attribute '${part.text}'`);
    name += "." + part.text;
  }
  return name;
}

const KEYWORDS = new Set(["and", "or", "not", "in", "is", "True", "False", "None", "lambda", "if", "else"]);
const CALLS = new Set(["ObjectId", "datetime"]);

function operand(stream: TokenStream): unknown {
  const scalar = stream.scalar();
  if (scalar !== undefined) return scalar;
  const token = stream.peek();
  if (token.kind === "name" && !KEYWORDS.has(token.text) && !CALLS.has(token.text)) return fieldName(stream);
  stream.next();
  if (token.kind === "name" && CALLS.has(token.text)) {
    stream.expect("(");
    const args: unknown[] = [];
    while (!stream.accept(")")) {
      if (args.length > 0) stream.expect(",");
      if (stream.accept(")")) break;
      const arg = stream.scalar();
      if (arg === undefined) throw badRequest(`bad argument to ${token.text}()`);
      args.push(arg);
    }
    return token.text === "ObjectId" ? objectId(args) : datetime(args);
  }
  throw badRequest(`expected a value but found '${token.text}'`);
}

function objectId(args: unknown[]): ObjectId {
  const [hex] = args;
  if (args.length !== 1 || typeof hex !== "string" || !isObjectIdHex(hex)) throw badRequest("bad ObjectId()");
  return new ObjectId(hex);
}

/** `datetime(year, month, day[, hour[, minute[, second[, microsecond]]]])`, in UTC. */
function datetime(args: unknown[]): Date {
  const limits: Array<[number, number]> = [[1, 9999], [1, 12], [1, 31], [0, 23], [0, 59], [0, 59], [0, 999_999]];
  if (args.length < 3 || args.length > limits.length) throw badRequest("datetime() takes 3 to 7 integers");
  const parts = args.map((arg, i) => {
    const [low, high] = limits[i]!;
    if (typeof arg !== "number" || !Number.isInteger(arg) || arg < low || arg > high) throw badRequest("datetime() argument out of range");
    return arg;
  });
  const [year, month, day, hour = 0, minute = 0, second = 0, micro = 0] = parts as [number, number, number, ...number[]];
  const date = new Date(Date.UTC(2000, month - 1, day, hour, minute, second, Math.floor(micro / 1000)));
  date.setUTCFullYear(year);
  if (date.getUTCDate() !== day) throw badRequest("day is out of range for month");
  return date;
}
