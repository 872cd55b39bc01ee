// What makes a field a media field, in a module of its own: the router (whether the media endpoint
// exists), the media feature (which files a document holds) and the multipart reader (where an
// upload may go) all ask, and the router is in every bundle's entry.

/**
 * A top-level media field: `media`, or a `list` of `media`. Files are stored, served and accepted
 * for these fields only, as Eve's store_media_files reads them.
 */
export function isMediaRule(rules: { type?: unknown; schema?: unknown } | undefined): boolean {
  return rules?.type === "media" || (rules?.type === "list" && (rules.schema as { type?: unknown } | undefined)?.type === "media");
}
