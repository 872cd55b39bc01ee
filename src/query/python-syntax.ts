// The slice of Python's expression syntax that Eve's query parameters use: names, string and
// number literals, True/False/None, comparison operators, brackets. Eve hands these strings to
// Python (`ast.parse`, `ast.literal_eval`); everest tokenizes and parses the subset itself so
// that nothing is ever evaluated.
import { badRequest } from "../errors.ts";
import { PYTHON_CONSTANTS } from "./python-constants.ts";

const HEX_DIGITS = /^[0-9a-fA-F]+$/;

export type TokenKind = "name" | "number" | "string" | "op" | "end";

export interface Token {
  kind: TokenKind;
  text: string;
  /** The decoded value of a string or number literal. */
  value?: string | number;
}

export interface TokenizeOptions {
  /** Python accepts 'single-quoted' strings; sort's JSON-like syntax must refuse them (SPEC). */
  singleQuotes: boolean;
}

const NAME = /[\p{ID_Start}_][\p{ID_Continue}]*/uy;
const NUMBER = /(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/y;
const OPERATOR = /==|!=|<=|>=|[<>()[\],.+-]/y;
const SPACE = /[ \t\r\n\f]+/y;

const ESCAPES: Record<string, string> = {
  "\\": "\\", "'": "'", '"': '"', n: "\n", t: "\t", r: "\r", b: "\b", f: "\f", v: "\v", a: "\x07",
};

function sticky(regex: RegExp, text: string, at: number): string | null {
  regex.lastIndex = at;
  return regex.exec(text)?.[0] ?? null;
}

/** A string literal starting at `at`: [decoded value, end offset]. */
function readString(text: string, at: number): [string, number] {
  const quote = text[at]!;
  let value = "";
  let i = at + 1;
  while (i < text.length && text[i] !== quote) {
    const char = text[i]!;
    if (char === "\n") break;
    if (char !== "\\") {
      value += char;
      i++;
      continue;
    }
    const next = text[i + 1];
    if (next === undefined) break;
    const octal = /^[0-7]{1,3}/.exec(text.slice(i + 1, i + 4))?.[0];
    const hex = next === "x" ? 2 : next === "u" ? 4 : next === "U" ? 8 : 0;
    if (octal) {
      value += String.fromCharCode(parseInt(octal, 8));
      i += 1 + octal.length;
    } else if (hex) {
      const digits = text.slice(i + 2, i + 2 + hex);
      if (digits.length !== hex || !HEX_DIGITS.test(digits)) throw badRequest(`bad \\${next} escape`);
      const code = parseInt(digits, 16);
      if (code > 0x10ffff) throw badRequest("escape out of range");
      value += String.fromCodePoint(code);
      i += 2 + hex;
    } else {
      // Python keeps an unknown escape as written, backslash included.
      value += ESCAPES[next] ?? "\\" + next;
      i += 2;
    }
  }
  if (text[i] !== quote) throw badRequest("unterminated string");
  return [value, i + 1];
}

export function tokenize(text: string, options: TokenizeOptions): Token[] {
  const tokens: Token[] = [];
  let at = 0;
  while (at < text.length) {
    const space = sticky(SPACE, text, at);
    if (space) {
      at += space.length;
      continue;
    }
    const char = text[at]!;
    if (char === '"' || (char === "'" && options.singleQuotes)) {
      const [value, end] = readString(text, at);
      tokens.push({ kind: "string", text: text.slice(at, end), value });
      at = end;
      continue;
    }
    const number = sticky(NUMBER, text, at);
    if (number) {
      // Python refuses leading zeros ("007") and digits running into a name ("1abc").
      if (/^0\d/.test(number) && !/[.eE]/.test(number) && !/^0+$/.test(number)) throw badRequest("leading zeros");
      if (sticky(NAME, text, at + number.length)) throw badRequest("invalid decimal literal");
      tokens.push({ kind: "number", text: number, value: Number(number) });
      at += number.length;
      continue;
    }
    const name = sticky(NAME, text, at);
    if (name) {
      tokens.push({ kind: "name", text: name });
      at += name.length;
      continue;
    }
    const operator = sticky(OPERATOR, text, at);
    if (!operator) throw badRequest(`unexpected character ${JSON.stringify(char)}`);
    tokens.push({ kind: "op", text: operator });
    at += operator.length;
  }
  tokens.push({ kind: "end", text: "" });
  return tokens;
}

/** Reading position over tokens, with a bound on bracket nesting (MAX_JSON_DEPTH). */
export class TokenStream {
  private index = 0;
  private depth = 0;

  constructor(
    private readonly tokens: Token[],
    private readonly maxDepth: number,
  ) {}

  peek(): Token {
    return this.tokens[this.index]!;
  }

  next(): Token {
    const token = this.tokens[this.index]!;
    if (token.kind !== "end") this.index++;
    return token;
  }

  /** Consumes the next token when it is `text` (an operator or a name). */
  accept(text: string): boolean {
    const token = this.peek();
    if ((token.kind === "op" || token.kind === "name") && token.text === text) {
      this.index++;
      return true;
    }
    return false;
  }

  expect(text: string): void {
    if (!this.accept(text)) throw badRequest(`expected '${text}' but found '${this.peek().text}'`);
  }

  expectEnd(): void {
    if (this.peek().kind !== "end") throw badRequest(`unexpected '${this.peek().text}'`);
  }

  enter(): void {
    if (++this.depth > this.maxDepth) throw badRequest("nested too deeply");
  }

  leave(): void {
    this.depth--;
  }

  /**
   * A scalar literal: a string, a number with any unary signs, True, False or None. Returns
   * `undefined`, consuming nothing, when the next tokens are not one.
   */
  scalar(): unknown {
    const start = this.index;
    let sign = 1;
    let signed = false;
    for (;;) {
      if (this.accept("-")) sign = -sign;
      else if (!this.accept("+")) break;
      signed = true;
    }
    const token = this.peek();
    if (token.kind === "number") {
      this.index++;
      return sign * (token.value as number);
    }
    if (!signed) {
      if (token.kind === "string") {
        this.index++;
        return token.value;
      }
      if (token.kind === "name" && token.text in PYTHON_CONSTANTS) {
        this.index++;
        return PYTHON_CONSTANTS[token.text];
      }
    }
    this.index = start;
    return undefined;
  }
}


/**
 * `ast.literal_eval` for lists, tuples and scalars (the sort syntax `[("name", -1)]`). Tuples
 * come out as arrays.
 */
export function parseLiteral(text: string, options: TokenizeOptions, maxDepth: number): unknown {
  const stream = new TokenStream(tokenize(text, options), maxDepth);
  const value = literal(stream);
  stream.expectEnd();
  return value;
}

function literal(stream: TokenStream): unknown {
  const scalar = stream.scalar();
  if (scalar !== undefined) return scalar;
  const close = stream.accept("[") ? "]" : stream.accept("(") ? ")" : null;
  if (!close) throw badRequest(`not a literal: '${stream.peek().text}'`);
  stream.enter();
  const items: unknown[] = [];
  let trailingComma = false;
  while (!stream.accept(close)) {
    if (items.length > 0 && !trailingComma) throw badRequest(`expected ',' or '${close}'`);
    items.push(literal(stream));
    trailingComma = stream.accept(",");
  }
  stream.leave();
  // Python's `("a")` is the string itself; only `("a",)` is a one-element tuple.
  if (close === ")" && items.length === 1 && !trailingComma) return items[0];
  return items;
}
