// A module imported when first needed, then used without awaiting: for code only some
// deployments run (a feature a resource turns on), so that bundles carry it in a module of its
// own and requests that never need it never wait for it.

/** A getter of the module: the module itself once loaded, its import's promise until then (retried after a failure). */
export function lazily<M>(load: () => Promise<M>): () => M | Promise<M> {
  let module: M | undefined;
  let loading: Promise<M> | undefined;
  return () => {
    if (module !== undefined) return module;
    loading ??= load().then(
      (loaded) => (module = loaded),
      (error: unknown) => {
        loading = undefined;
        throw error;
      },
    );
    return loading;
  };
}

/** Calls `use` with the module, at once when it is loaded. */
export function withModule<M, T>(get: () => M | Promise<M>, use: (module: M) => Promise<T>): Promise<T> {
  const module = get();
  return module instanceof Promise ? module.then(use) : use(module);
}
