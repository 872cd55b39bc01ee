// Reading the parameters of a gateway request's body, and the error that refuses one.
import type { ErrorBody, ErrorCode } from "../drivers/data-api/protocol.ts";

export class GatewayError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly extra: Partial<ErrorBody> = {},
  ) {
    super(message);
  }
}

export type Body = Record<string, unknown>;

export function field<T>(body: Body, name: string, check: (value: unknown) => value is T, expected: string): T | undefined {
  const value = body[name];
  if (value === undefined) return undefined;
  if (!check(value)) throw new GatewayError("InvalidParameter", `'${name}' must be ${expected}`);
  return value;
}

export function required<T>(body: Body, name: string, check: (value: unknown) => value is T, expected: string): T {
  const value = field(body, name, check, expected);
  if (value === undefined) throw new GatewayError("MissingParameter", `'${name}' is required`);
  return value;
}

export const isString = (value: unknown): value is string => typeof value === "string";
export const isCount = (value: unknown): value is number => typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
