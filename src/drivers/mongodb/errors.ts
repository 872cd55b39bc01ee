// What the mongodb package throws, in the contract's terms. The rule: the server answered and
// refused the command → the request was at fault (InvalidQueryError), except for the answers
// that say the server cannot serve right now (shutting down, stepping down, not primary,
// credentials refused), which like every network and server-selection failure mean the
// database is unavailable.
import { BSONError, deserialize, serialize } from "bson";
import {
  MongoBulkWriteError,
  MongoError,
  MongoInvalidArgumentError,
  MongoNetworkError,
  MongoNotConnectedError,
  MongoOperationTimeoutError,
  MongoServerClosedError,
  MongoServerError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
} from "mongodb";
import { DatabaseUnavailableError, DuplicateKeyError, InvalidQueryError } from "../types.ts";

/** E11000 and its legacy spellings. */
export const DUPLICATE_KEY_CODES = new Set([11000, 11001, 12582]);

/**
 * Server codes that describe the server's state, not the command: HostUnreachable,
 * HostNotFound, Unauthorized, AuthenticationFailed, MaxTimeMSExpired, WriteConcernFailed,
 * NetworkTimeout, ShutdownInProgress, UnsatisfiableWriteConcern, PrimarySteppedDown,
 * ExceededTimeLimit, SocketException, NotWritablePrimary, InterruptedAtShutdown,
 * InterruptedDueToReplStateChange, NotPrimaryNoSecondaryOk, NotPrimaryOrSecondary.
 */
const UNAVAILABLE_CODES = new Set([6, 7, 13, 18, 50, 64, 89, 91, 100, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436]);

function isUnavailable(error: MongoError): boolean {
  if (
    error instanceof MongoNetworkError ||
    error instanceof MongoServerSelectionError ||
    error instanceof MongoTopologyClosedError ||
    error instanceof MongoNotConnectedError ||
    error instanceof MongoServerClosedError ||
    error instanceof MongoOperationTimeoutError
  ) {
    return true;
  }
  if (error.hasErrorLabel("RetryableWriteError") || error.hasErrorLabel("ResetPool")) return true;
  return typeof error.code === "number" && UNAVAILABLE_CODES.has(error.code);
}

/**
 * Socket failures the mongodb package lets through as Node's own errors (a write to a connection
 * the server has just closed: EPIPE), not as MongoNetworkError.
 */
const NETWORK_CODES = new Set(["EPIPE", "ECONNRESET", "ECONNREFUSED", "ECONNABORTED", "ETIMEDOUT", "ENOTCONN", "EHOSTUNREACH", "ENETUNREACH"]);

/** The contract's error for `error`, or `error` itself when it is none of them (a bug: 500). */
export function translateError(error: unknown): unknown {
  if (error instanceof DuplicateKeyError || error instanceof InvalidQueryError || error instanceof DatabaseUnavailableError) return error;
  // A bulk write (insertMany) that failed for another reason than its documents wraps that
  // failure, a lost connection among them, in a MongoServerError subclass: judged by what it wraps.
  if (error instanceof MongoBulkWriteError && error.errorResponse instanceof Error && error.errorResponse !== error) return translateError(error.errorResponse);
  if (error instanceof Error && NETWORK_CODES.has((error as { code?: unknown }).code as string)) {
    return new DatabaseUnavailableError(`MongoDB is unavailable: ${error.message}`, { cause: error });
  }
  if (error instanceof MongoError) {
    if (isUnavailable(error)) return new DatabaseUnavailableError(`MongoDB is unavailable: ${error.message}`, { cause: error });
    if (error instanceof MongoServerError) {
      if (typeof error.code === "number" && DUPLICATE_KEY_CODES.has(error.code)) {
        const keyValue = error.keyValue;
        // Re-encoded so its values are everest's bson classes, not the mongodb package's copies.
        return new DuplicateKeyError(keyValue && typeof keyValue === "object" ? deserialize(serialize(keyValue)) : {}, error.message);
      }
      return new InvalidQueryError(error.message, { cause: error });
    }
    if (error instanceof MongoInvalidArgumentError) return new InvalidQueryError(error.message, { cause: error });
    return error;
  }
  // Raised while serializing a value BSON cannot hold (a key with a NUL byte, a cyclic document).
  // By its brand, not instanceof: the mongodb package (CommonJS) throws the BSONError of bson's
  // CommonJS build, a class of its own beside the ES module everest imports.
  if (BSONError.isBSONError(error)) return new InvalidQueryError(error.message, { cause: error });
  return error;
}

/** Runs an operation of the mongodb package, what it throws translated. */
export async function run<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    throw translateError(error);
  }
}
