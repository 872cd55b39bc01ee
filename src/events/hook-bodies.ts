// Bodies an on_pre or on_post hook may read, as Flask's cached bodies let Eve's hooks read theirs
// (`request.get_json()` in an on_pre_POST, `payload.get_data()` in an on_post_GET), without
// taking them from everest: a web body can be read once only.

/** The request an on_pre hook gets: a copy of one with a body, the body everest reads left whole. */
export function readableRequest(request: Request): Request {
  return request.body !== null && !request.bodyUsed ? request.clone() : request;
}

/**
 * Runs the on_post hooks on the response; if one read its body, the answer is made again from a
 * copy taken before, with the status and headers the hooks left.
 */
export async function afterPostHooks(response: Response, run: (response: Response) => Promise<void>): Promise<Response> {
  const spare = response.body !== null ? response.clone() : null;
  await run(response);
  if (!spare) return response;
  if (!response.bodyUsed) {
    void spare.body?.cancel();
    return response;
  }
  return new Response(spare.body, { status: response.status, statusText: response.statusText, headers: response.headers });
}
