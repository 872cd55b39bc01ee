// The text form of an ObjectId. Eve (bson's ObjectId.is_valid) accepts either case.

export const OBJECT_ID_PATTERN = "^[0-9a-fA-F]{24}$";

const OBJECT_ID = new RegExp(OBJECT_ID_PATTERN);

/** 24 hex digits, upper or lower case. */
export function isObjectIdHex(text: string): boolean {
  return OBJECT_ID.test(text);
}
